"""The exercise file's JSON Schema, for editors' completion and checks, written from the pydantic model the suite
validates every file with (lm/settings/exercise_file.py).

    python -m lm.tools.schema [--check]      # make schema

Writes experiments/exercise.schema.json; with --check, writes nothing and exits 1 if the file is not the model's.
An editor reads it from a `# yaml-language-server: $schema=exercise.schema.json` line, or from its settings.
"""
import sys

from lm.settings.exercise_file import SCHEMA_FILE, schema_text


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    text = schema_text()
    if "--check" in argv:
        same = SCHEMA_FILE.exists() and SCHEMA_FILE.read_text(encoding="utf-8") == text
        print(f"{SCHEMA_FILE.name}: {'as the model' if same else 'stale: run make schema'}")
        return 0 if same else 1
    SCHEMA_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {SCHEMA_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
