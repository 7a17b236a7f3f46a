"""Every command's options in one form, key=value, parsed by OmegaConf against the command's dataclass
(lm/settings/options.py): each type converted, a bare switch the switch on, and every mistake one line naming the fix."""
import pytest

from lm.settings import options
from lm.settings.errors import ConfigError
from lm.settings.options import (
    Accelerator,
    BenchOptions,
    GpuCheckOptions,
    HeadsOptions,
    ReportOptions,
    SampleOptions,
    Section,
    Step,
    UiOptions,
)


def test_each_value_is_converted_by_its_fields_type():
    o = options.parse(SampleOptions, ["temperature=0.5", "length=80", "seed=3", "run=abc"])
    assert (o.temperature, o.length, o.seed, o.run) == (0.5, 80, 3, "abc")
    assert options.parse(HeadsOptions, ["force=false", "quick=yes"]) == HeadsOptions(quick=True, force=False)
    assert options.parse(ReportOptions, ["tracking_uri="]).tracking_uri is None
    g = options.parse(GpuCheckOptions, ["runtime.accelerator=cpu", "large_seconds=2.5", "only=env,numerics"])
    assert (g.runtime.accelerator, g.large_seconds, g.only) == (Accelerator.CPU, 2.5, [Step.ENV, Step.NUMERICS])


def test_no_words_are_the_defaults():
    assert options.parse(BenchOptions, []) == BenchOptions()
    assert options.parse(UiOptions, []) == UiOptions(host="127.0.0.1", port=5000, server=[])


def test_a_bare_switch_is_the_switch_on_the_one_alias():
    assert options.parse(BenchOptions, ["quick"]) == options.parse(BenchOptions, ["quick=true"])
    assert options.parse(ReportOptions, ["quick"]).quick


def test_a_list_is_hydras_brackets_or_commas():
    assert options.parse(BenchOptions, ["only=[startup,process]"]).only == [Section.STARTUP, Section.PROCESS]
    assert options.parse(BenchOptions, ["only=startup,process"]).only == [Section.STARTUP, Section.PROCESS]
    ui = options.parse(UiOptions, ["server=[--workers,4,--allowed-hosts,'a.internal,a.internal:5000']"])
    assert ui.server == ["--workers", "4", "--allowed-hosts", "a.internal,a.internal:5000"]


def test_text_is_taken_verbatim():
    """A prompt holds =, commas, quotes and ${...}, none of which OmegaConf or Hydra may read."""
    text = "ROMEO: a, b='c' ${x} $5"
    assert options.parse(SampleOptions, [f"prompt={text}"]).prompt == text


@pytest.mark.parametrize("schema, argv, message", [
    (HeadsOptions, ["force=ture"], "force='ture' is not true or false: did you mean force=true?"),
    (HeadsOptions, ["force=maybe"], "force='maybe' is not true or false: force=true or force=false"),
    (ReportOptions, ["quik=true"], ("unknown option 'quik=true': did you mean quick=true? (the options are "
                                    "quick=true|false, ablations=TEXT, out=TEXT, log=true|false, tracking_uri=TEXT, "
                                    "docs=TEXT, svg=true|false)")),
    (BenchOptions, ["quik"], "unknown option 'quik': did you mean quick=true?"),
    (BenchOptions, ["threads=two"], "threads='two' is not a whole number: threads=N"),
    (BenchOptions, ["only=startup,nosuch"], ("only='startup,nosuch': 'nosuch' is not one of train, sample, suite, "
                                             "memory, startup, process, report")),
    (SampleOptions, ["temperature=hot"], "temperature='hot' is not a number: temperature=X"),
    (SampleOptions, ["run"], "run needs a value: run=TEXT"),
    (UiOptions, ["--port", "5001"], "unknown option '--port': options are key=value: port=5001"),
    (UiOptions, ["--port=5001"], "unknown option '--port=5001': options are key=value: port=5001"),
    (UiOptions, ["--workers", "4"], "unknown option '--workers': server=[...] passes options on: server=[--workers,4]"),
    (UiOptions, ["server=[--x,'a"], "cannot read the list \"[--x,'a\""),
    (GpuCheckOptions, ["runtime.accelerator=tpu"], "runtime.accelerator='tpu': 'tpu' is not one of cuda, cpu"),
    (GpuCheckOptions, ["runtime.device=cpu"], ("unknown option 'runtime.device=cpu': did you mean "
                                               "runtime.accelerator=cpu?")),
])
def test_a_mistake_is_one_line_that_names_the_fix(schema, argv, message):
    with pytest.raises(ConfigError) as e:
        options.parse(schema, argv)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)
