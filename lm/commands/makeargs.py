"""What a user types through `make`, handed to a program exactly as typed: the Makefile exports each make variable
raw (`$(value VAR)`) as TINYGPT_MAKE_<VAR>, and this shim builds the program's argv from a template and execs it.

    python -m lm.commands.makeargs MODULE [TEMPLATE WORD ...]

A template word is copied as it is, unless it names a make variable of VARIABLES:
    ARGS            the variable's words (ARGS is split into words; any other variable is one word)
    key=PROMPT      key=<value>
    key=[ABLATIONS] key=[<value>]
    --opt=RESUME    --opt <value>   (two words, for lm.commands.train's --resume)
A word whose variable was not given is left out. No shell reads any of it: the program is started with os.execv.
TINYGPT_MAKEARGS_ECHO=1 prints the argv (as JSON) instead of starting the program: the tests' view of what arrived.
"""
import json
import os
import re
import shlex
import sys


def words(value: str) -> list[str]:
    """ARGS's words: split at whitespace; single or double quotes group a word with spaces in it and are removed.
    A backslash and a # are ordinary characters (a prompt's \\n reaches the program), and nothing is expanded."""
    lexer = shlex.shlex(value, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    lexer.escape = ""
    try:
        return list(lexer)
    except ValueError as e:  # shlex's only error: "No closing quotation"
        raise ValueError(f"{str(e).lower()}: quote a word with spaces in it whole, as in ARGS=\"key='a b'\", "
                         f"and put an apostrophe inside double quotes") from None


def quoted(word: str) -> str:
    """A word as `words` reads it back: bare where it can be, else in single quotes (an apostrophe in it closes
    them, stands in double quotes, and opens them again)."""
    if re.fullmatch(r"[^\s'\"]+", word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def command(target: str, args: list[str], **variables: str) -> str:
    """The `make` command line that hands a program `args` and the variables, for a user to paste into a shell:
    ARGS's words quoted for `words`, and every value quoted for the shell."""
    given = {**variables, "ARGS": " ".join(quoted(a) for a in args)} if args else variables
    return " ".join(["make", target, *(f"{k}={shlex.quote(v)}" for k, v in given.items())])


def names(value: str) -> str:
    """ABLATIONS: exercise names, separated by commas or spaces, as one Hydra list's items."""
    items = [n for n in re.split(r"[\s,]+", value) if n]
    bad = [n for n in items if not re.fullmatch(r"[\w-]+", n)]
    if not items or bad:
        raise ValueError(f"{value!r} is not a list of exercise names (letters, digits, - and _, separated by "
                         f"commas): ABLATIONS=nomask,heads")
    return ",".join(items)


def count(value: str) -> str:
    if not re.fullmatch(r"[0-9]+", value):
        raise ValueError(f"{value!r} is not a whole number: SEEDS=3")
    return value


def text(value: str) -> str:
    return value


# Every make variable that carries user text, and what it must look like. A new one is one line here and one
# name in the Makefile's USER_TEXT.
VARIABLES = {
    "ARGS": words,
    "ABLATIONS": names,
    "SEEDS": count,
    "RESUME": text,
    "RUN": text,
    "PROMPT": text,
    "HOST": text,
    "PORT": text,
    "EXERCISE": text,
    "BUDGET": text,
    "A": text,
    "B": text,
}
TEMPLATE = re.compile(r"(?P<pre>.*?)(?P<name>[A-Z][A-Z_]*)(?P<post>\]?)")


def given(name: str, env=os.environ) -> str | None:
    """The variable's value exactly as typed, None when it was not given; an empty one is refused, but for ARGS."""
    value = env.get(f"TINYGPT_MAKE_{name}")
    if value == "" and name != "ARGS":
        raise ValueError(f"{name} is empty; leave {name} out for its default, or give it a value")
    return value


def argv(template: list[str], env=os.environ) -> list[str]:
    out = []
    for word in template:
        m = TEMPLATE.fullmatch(word)
        if not m or m["name"] not in VARIABLES:
            out.append(word)
            continue
        value = given(m["name"], env)
        if value is None:
            continue
        try:
            value = VARIABLES[m["name"]](value)
        except ValueError as e:
            raise ValueError(f"{m['name']}: {e}") from None
        if isinstance(value, list):
            out += value
        elif m["pre"].startswith("--") and m["pre"].endswith("="):
            out += [m["pre"][:-1], value]
        else:
            out.append(m["pre"] + value + m["post"])
    return out


def main(args: list[str] | None = None) -> int:
    module, *template = sys.argv[1:] if args is None else args
    try:
        command = [sys.executable, "-m", module, *argv(template)]
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if os.environ.get("TINYGPT_MAKEARGS_ECHO"):
        print(json.dumps(command[3:], ensure_ascii=False))
        return 0
    sys.stdout.flush()
    os.execv(sys.executable, command)


if __name__ == "__main__":
    raise SystemExit(main())
