import sys

from vitcore.run import spawn

with spawn.imports():  # the CLI's imports (pandas, SciPy) without garbage collections: vitcore.run.spawn
    from vitcore.cli import main
    from vitcore.cli.common import escaped_excepthook

sys.excepthook = escaped_excepthook  # a bug's traceback, names from the disk in it escaped
spawn.exit(main())
