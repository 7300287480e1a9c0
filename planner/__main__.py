"""`python -m planner` and the `planner` command. The command line is imported here, inside
main(), so that a missing dependency (click, PyYAML, openpyxl, ...) is reported as one, not as a
traceback."""

import sys


def main() -> None:
    try:
        from planner.cli import main as cli_main
    except ImportError as exc:
        from planner.errors import MissingDependencyError

        missing = MissingDependencyError.from_import_error(exc)
        if missing is None:
            raise
        sys.stderr.write(f"Error: {missing}\n")
        sys.exit(1)
    cli_main()


if __name__ == "__main__":
    main()
