"""An exercise file's schema: the pydantic model every experiments/*.yaml is validated with before anything trains
(unknown fields refused, each report entry one of the report's kinds with its own options), the line each field
is on, and its mistakes as one line: `file:line: what is wrong (did you mean ...?)`. The JSON Schema editors read
(experiments/exercise.schema.json, `make schema`) is generated from the same model.
"""
import dataclasses
import difflib
import json
import typing
from pathlib import Path
from typing import Annotated, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, ValidationError, create_model

from lm.settings.claims import Claim, Source
from lm.settings.errors import ConfigError
from lm.settings.report_kinds import KINDS

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "experiments" / "exercise.schema.json"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Where the file is stricter than Claim's plain types.
REFINED = {
    "best": Literal["min", "max"],
    "delta": Annotated[PositiveFloat | None, Field(description="for a value: the difference from the lesson's "
                                                                "number that would matter")],
    "windows": PositiveInt | None,
}


def _claim_file() -> type[BaseModel]:
    """One claim as the file gives it: Claim's fields (lm/settings/claims.py says what each is), in its order."""
    hints = typing.get_type_hints(Claim)
    fields = {f.name: (REFINED.get(f.name, hints[f.name]), ... if f.default is dataclasses.MISSING else f.default)
              for f in dataclasses.fields(Claim)}
    return create_model("ClaimFile", __base__=Strict, __doc__=_claim_file.__doc__, **fields)


ClaimFile = _claim_file()


def _entry(kind: str, options: dict[str, object]) -> type[BaseModel]:
    """A report entry of one kind: `kind` and that kind's options, each optional (the report has their defaults)."""
    fields = {name: (annotation, None) for name, annotation in options.items()}
    return create_model(f"Report_{kind}", __base__=Strict, kind=(Literal[kind], ...), **fields)


ENTRIES = {kind: _entry(kind, options) for kind, options in KINDS.items()}
ReportEntry = Annotated[Union[tuple(ENTRIES.values())], Field(discriminator="kind")]


class ExerciseFile(Strict):
    """An exercise file (lm/settings/exercises.py's Exercise says what each field is)."""
    title: str
    lesson: str
    measures: str
    variants: dict[str, list[str] | None]
    steps: PositiveInt | None = None
    seeds: PositiveInt | None = None
    overrides: list[str] = []
    init_from: str | None = None
    budget: str | None = None
    corpus: str | None = None
    claims: list[ClaimFile] = []
    report: list[ReportEntry] | None = None
    ui: dict | None = None
    disjoint_seeds: bool = False


def schema() -> dict:
    """The JSON Schema of an exercise file, for editors' completion and checks."""
    out = ExerciseFile.model_json_schema()
    out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    out["title"] = "tinygpt-ablations exercise file (experiments/*.yaml)"
    return out


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def suggest(word, choices) -> str:
    """` (did you mean 'x'?)` with difflib's closest choice, or nothing when none is close."""
    found = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {found[0]!r}?)" if found else ""


class Lines:
    """Where each field of a YAML text is: the line of each key and list item, by its path of keys and indexes."""

    def __init__(self, source: str, text: str):
        self.source, self.at = source, {}
        try:
            root = yaml.compose(text)
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = f":{mark.line + 1}" if mark else ""
            raise ConfigError(f"{source}{line}: YAML syntax: {e.problem or e.context}") from None
        except yaml.YAMLError as e:
            raise ConfigError(f"{source}: YAML syntax: {str(e).splitlines()[0]}") from None
        if root is not None:
            self._walk(root, ())

    def _walk(self, node, path):
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                self.at[(*path, key.value)] = key.start_mark.line + 1
                self._walk(value, (*path, key.value))
        elif isinstance(node, yaml.SequenceNode):
            for i, value in enumerate(node.value):
                self.at[(*path, i)] = value.start_mark.line + 1
                self._walk(value, (*path, i))

    def line(self, loc) -> int:
        """The line of the deepest part of `loc` the text has (a missing field: its parent's); parts the text does
        not have (a union's tag) are passed over."""
        path, line = (), 1
        for part in loc:
            if (*path, part) in self.at:
                path = (*path, part)
                line = self.at[path]
        return line

    def where(self, loc) -> str:
        return f"{self.source}:{self.line(loc)}"

    def error(self, loc, message: str) -> ConfigError:
        return ConfigError(f"{self.where(loc)}: {message}")


def _what(loc, raw) -> str:
    """How a message names the place: `claim 'Deeper ends lower'…`, `report entry 2`, or the field's path."""
    if len(loc) >= 2 and loc[0] == "claims" and isinstance(loc[1], int):
        claims = raw.get("claims") if isinstance(raw, dict) else None
        text = claims[loc[1]].get("text") if isinstance(claims, list) and isinstance(claims[loc[1]], dict) else None
        return f"claim {str(text)[:40]!r}…" if text else f"claim {loc[1] + 1}"
    if len(loc) >= 2 and loc[0] == "report" and isinstance(loc[1], int):
        return f"report entry {loc[1] + 1}"
    return ""


def _message(error: dict, raw) -> str:
    tagged = tuple(error["loc"])
    loc = _file_loc(tagged)
    what = _what(loc, raw)
    field = str(loc[-1]) if loc else ""
    inside = (what + " ") if what else ""
    kind = error["type"]
    if kind == "extra_forbidden":
        model = _model_at(tagged[:-1])
        fields = list(model.model_fields) if model else []
        where = f"{inside}has" if what else "has"
        return f"{where} unknown field {field!r}{suggest(field, fields)}; its fields are {', '.join(fields)}"
    if kind == "union_tag_invalid":
        tag = error.get("ctx", {}).get("tag")
        return f"{inside}has unknown kind {tag!r}{suggest(tag, KINDS)}; the kinds are {', '.join(KINDS)}"
    if kind == "union_tag_not_found":
        return f"{inside}has no kind: each entry names one of {', '.join(KINDS)}"
    if kind == "missing":
        return f"{inside}needs `{field}`".strip()
    if kind == "enum" and field == "source":
        return f"{inside}has source {error['input']!r}: it is {' or '.join(s.value for s in Source)}"
    path = ".".join(str(p) for p in loc[2:] if not isinstance(p, int)) if what else ".".join(map(str, loc))
    if not path:   # the entry itself: a text where a mapping of fields belongs
        return f"{inside}is {error['input']!r}: {error['msg'].lower()}"
    return f"{inside}has {path}: {error['input']!r}: {error['msg'].lower()}"


def _model_at(loc) -> type[BaseModel] | None:
    """The model of the object a location names (for the fields it has)."""
    if not loc:
        return ExerciseFile
    if loc[0] == "claims":
        return ClaimFile
    if loc[0] == "report" and len(loc) >= 2:
        return ENTRIES.get(loc[2]) if len(loc) > 2 else None
    return None


def validate(text: str, source: str) -> tuple[dict, Lines]:
    """The file's fields as YAML reads them, once they fit the schema, and their lines; its first mistake as one
    ConfigError, `file:line: ...`."""
    lines = Lines(source, text)
    raw = yaml.safe_load(text)
    if not isinstance(raw, dict):
        raise lines.error((), "an exercise file is a mapping of fields: title, lesson, measures, variants, ...")
    report = raw.get("report")
    if report is not None and not (isinstance(report, list) and all(
            isinstance(e, dict) and isinstance(e.get("kind"), str) for e in report)):
        raise lines.error(("report",), "report must be a list of entries, each with a kind: "
                                       "report: [{kind: curves, metrics: [val_loss]}]")
    try:
        ExerciseFile.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        loc = tuple(first["loc"])
        raise ConfigError(f"{lines.where(_file_loc(loc))}: {_message(first, raw)}") from None
    return raw, lines


def _file_loc(loc):
    """A location as the text has it: without a report entry's tag, which pydantic's puts after its index."""
    if loc and loc[0] == "report" and len(loc) > 2 and loc[2] in KINDS:
        return (*loc[:2], *loc[3:])
    return loc
