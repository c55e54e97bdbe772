"""``python -m lsa_lib.sweep`` (see :func:`lsa_lib.sweep.main`)."""

from lsa_lib.sweep._run import main

raise SystemExit(main())
