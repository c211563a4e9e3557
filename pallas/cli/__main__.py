import sys

from pallas.cli.main import main

sys.exit(main())
