"""``python -m forkjoin_cli``: the ``forkjoin-sim`` command."""

import sys

from forkjoin_cli.main import main

sys.exit(main())
