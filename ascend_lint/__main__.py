from ascend_lint.cli import main

raise SystemExit(main())
