FROM python:3.11-slim

WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOST=0.0.0.0 PORT=8080

COPY pyproject.toml README.md ./
COPY pallas ./pallas
RUN pip install --no-cache-dir ".[postgres,redis]"  # asyncpg: DATABASE_URL=postgresql+asyncpg://…
# the NoneBot plugins listed in [tool.nonebot.plugins] of pyproject.toml (docs/plugins.md)
RUN python -m pallas.onebot.plugin_loading > /tmp/plugins.txt \
    && if [ -s /tmp/plugins.txt ]; then pip install --no-cache-dir -r /tmp/plugins.txt; fi

COPY bot.py ./
COPY packages ./packages
COPY config ./config

VOLUME ["/app/data", "/app/config"]
EXPOSE 8080
CMD ["python", "bot.py"]
