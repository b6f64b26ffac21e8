from vitcore.cli import main

raise SystemExit(main())
