from pallas_ls.cli import main

raise SystemExit(main())
