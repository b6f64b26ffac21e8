from vitcore.run import startup

with startup.imports():  # the CLI's imports (pandas, SciPy) without garbage collections: vitcore.run.startup
    from vitcore.cli import main

startup.exit(main())
