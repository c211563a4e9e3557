import sys

from pallas.console.main import main

sys.exit(main())
