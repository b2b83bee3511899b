"""``python -m browsermesh``: identical to the ``browsermesh`` console script."""

from browsermesh.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
