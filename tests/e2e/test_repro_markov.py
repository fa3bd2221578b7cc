"""`ccscope repro markov` (paper 000) end to end, on a short run: 120 s, two seeds, one training trace
(Verizon-LTE-short.up) and one evaluation trace (Verizon-LTE-short.down, the same route's downlink).

The claim tests compute each verdict themselves from the runs' records (throughput, delay and per-user
throughputs per run) against their own bounds, never from the report's own yes/no, thresholds or Jain's
index; a claim this setup does not reproduce is a strict expected failure with the measured numbers as its
reason. docs/reproductions/claim-tests.md lists them."""

import statistics

import re

import pandas as pd
import pytest
from typer.testing import CliRunner

from ccscope import traces
from ccscope.cli import app
from ccscope.models import markov

from _experiments import load_experiment  # noqa: E402

rm = load_experiment("markov")

TRAIN, EVAL = "Verizon-LTE-short.up", "Verizon-LTE-short.down"
# The claims' user counts and bounds are the tests' own (claim-tests.md), not read from the report code under test.
USERS = (1, 2, 3, 4)
TPUT_TOL, DELAY_TOL = 0.15, 0.50


def _trace_dir():
    try:
        d = traces.find_traces()
    except traces.TraceDirNotFound:
        return None
    return d if (d / TRAIN).is_file() and (d / EVAL).is_file() else None


TRACES = _trace_dir()
pytestmark = pytest.mark.skipif(TRACES is None, reason="shared traces (../shared/traces) not found")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(report path, every evaluation run's record) of the short reproduction."""
    out = tmp_path_factory.mktemp("repro") / "markov.md"
    records: list = []
    rm.markov_repro(out, traces=TRACES, seconds=120, seeds=2, train=[TRAIN], evaluate=[EVAL], fast_links=False,
                    jobs=2, records=records)
    return out, records


@pytest.fixture(scope="module")
def report_path(run):
    return run[0]


@pytest.fixture(scope="module")
def report(report_path):
    return report_path.read_text()


def claims(md: str, draw: str = "closest") -> dict:
    """The yes/no of each claim under the paper's draw (closest) or ours (proportional)."""
    closest, _, proportional = md.split("## The issue's claims")[1].partition("### With the proportional draw")
    part = closest if draw == "closest" else proportional
    return {k: v == "yes" for k, v in re.findall(r"^\*\*\((\w+)\).*?\*\*(yes|no)\*\*", part, re.M)}


def test_the_report_has_every_table_and_figure(report, tmp_path):
    for heading in ("## Setup", "## Table 2", "## Fig. 7", "## Figs. 8-9", "## Fig. 10", "## ON/OFF traffic",
                    "## The issue's claims"):
        assert heading in report
    assert f"**Training, set 1:** `{TRAIN}`" in report and f"**Evaluation, set 2:** `{EVAL}`" in report
    for q in (1, 2, 5, 10, 20):
        assert f"| {q} ms |" in report and f"| model {q} ms |" in report
    assert report.count(f"| `{EVAL}` |") >= 3
    assert set(claims(report)) == set(claims(report, "proportional")) == {"1", "2a", "2b", "3", "4"}
    assert "| model | epochs | delay below range | delay above range | dead ends |" in report
    assert "fig5_heatmap_1ms.png" in report and "fig6_heatmap_10ms.png" in report
    onoff = report.split("## ON/OFF traffic")[1].split("## ")[0]
    assert "| files done |" in onoff and "fig12_onoff_per_user.png" in onoff


def test_figures_are_written_next_to_the_report(report, report_path):
    # Paths are relative to the report: <out stem>/<figure>.png.
    names = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", report)
    assert len(names) >= 5 and all(n.startswith("markov/") and n.endswith(".png") for n in names)
    for n in names:
        assert (report_path.parent / n).stat().st_size > 1000, n


# --- paper 000's claims, computed from the records (the paper's closest-probability draw, §3.2) ---------


def _runs(run, scheme: str, users: int, trace: str = EVAL) -> list:
    rs = [r for r in run[1] if r["scheme"] == scheme and r["users"] == users and r["trace"] == trace]
    assert len(rs) == 2, (scheme, users, trace)
    return rs


def _mean(run, scheme: str, users: int, key: str, trace: str = EVAL) -> float:
    return statistics.fmean(r[key] for r in _runs(run, scheme, users, trace))


def _table(run, schemes, key: str) -> str:
    return "; ".join(f"{s} " + "/".join(f"{_mean(run, s, n, key):.3g}" for n in USERS) for s in schemes)


def _jain(r: dict) -> float:
    """Jain's index of one run, from its users' own throughputs (not the record's `jain`, which the report computes)."""
    x = r["flow_tput"]
    assert len(x) == r["users"], r
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x))


def test_the_runs_cover_the_claims_users():
    assert tuple(rm.USERS) == USERS


def test_nonmatching_model_delay_rises_with_every_added_user(run):
    # §6.3: trained with one user, "an increase in the network delay throughout all three scenarios".
    d = [_mean(run, "nonmatch", n, "delay") for n in USERS]
    assert d[0] < d[1] < d[2] < d[3], _table(run, ["verus", "nonmatch"], "delay")


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="§6.3: with four users the non-matching model's per-user delay is 'increased "
                   "by a factor of four' (against Verus); measured 1.4x here (136 against 98 ms)")
def test_nonmatching_model_delay_with_four_users_is_four_times_verus(run):
    assert _mean(run, "nonmatch", 4, "delay") >= 4 * _mean(run, "verus", 4, "delay"), _table(run, ["verus", "nonmatch"], "delay")


def test_verus_outsends_the_one_user_model_alone(run):
    # §6.3: "In the scenario with one user ... Verus, however, shows a slightly higher throughput."
    assert _mean(run, "verus", 1, "tput") > _mean(run, "nonmatch", 1, "tput"), _table(run, ["verus", "nonmatch"], "tput")


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="§6.3: with 2-4 users the non-matching model 'achieves slightly higher throughput' "
                   "than Verus; measured 2-8% lower at every user count (2.25/1.59/1.22 against 2.44/1.67/1.26 Mbit/s)")
def test_nonmatching_model_outsends_verus_with_two_to_four_users(run):
    for n in USERS[1:]:
        assert _mean(run, "nonmatch", n, "tput") > _mean(run, "verus", n, "tput"), _table(run, ["verus", "nonmatch"], "tput")


@pytest.mark.parametrize("scheme", ["nonmatch", "match", "combined"])
def test_every_model_shares_the_link_almost_perfectly_fairly(run, scheme):
    # §6.3 ("almost perfect fairness among users despite a non-matching user model"), §6.4, §6.5: every run.
    for n in USERS[1:]:
        for r in _runs(run, scheme, n):
            assert _jain(r) >= 0.99, (scheme, n, r["seed"], r["flow_tput"])


def test_matching_model_throughput_within_15pct_of_verus(run):
    # §6.4: "similar performance to Verus ... when the number of users in the training matches" (throughput
    # "marginally higher", "comparable"); 15% is the bound.
    for n in USERS[1:]:
        m, v = _mean(run, "match", n, "tput"), _mean(run, "verus", n, "tput")
        assert abs(m / v - 1) <= TPUT_TOL, _table(run, ["verus", "match"], "tput")


def test_matching_model_delay_within_50pct_of_verus_with_two_users(run):
    # §6.4, Fig. 8: two users, "5 - 20% higher", "around 50%" on the most fluctuating trace.
    m, v = _mean(run, "match", 2, "delay"), _mean(run, "verus", 2, "delay")
    assert m <= (1 + DELAY_TOL) * v, _table(run, ["verus", "match"], "delay")


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="§6.4: with three and four users the matching model's delay is 20-40% and 'up to "
                   "30%' above Verus's (2x on the paper's most fluctuating trace); measured 2.4x (166 against 70 ms) and "
                   "1.8x (177 against 98 ms)")
def test_matching_model_delay_within_50pct_of_verus_with_three_and_four_users(run):
    for n in (3, 4):
        m, v = _mean(run, "match", n, "delay"), _mean(run, "verus", n, "delay")
        assert m <= (1 + DELAY_TOL) * v, _table(run, ["verus", "match"], "delay")


def test_combined_matching_and_nonmatching_models_send_alike(run):
    # §6.5, Fig. 10: "the throughput shows very similar results throughout all scenarios" (within 10% here).
    for n in USERS:
        t = [_mean(run, s, n, "tput") for s in ("match", "nonmatch", "combined")]
        assert max(t) <= 1.10 * min(t), _table(run, ["match", "nonmatch", "combined"], "tput")


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="§6.5: the combined model's delay is 'significantly' better than the non-matching "
                   "model's, 'especially' with four users; measured 2.5x worse (342 against 136 ms; combined is the "
                   "slowest of the three models at 3 and 4 users)")
def test_combined_model_delay_below_nonmatching_with_four_users(run):
    assert _mean(run, "combined", 4, "delay") < _mean(run, "nonmatch", 4, "delay"), \
        _table(run, ["match", "nonmatch", "combined"], "delay")


def test_onoff_model_sends_marginally_less_than_verus_with_lower_delay_and_fair_shares(run):
    # §6.6, Fig. 12: "marginally lower throughput", "network delay ... slightly lower", "almost perfect fairness".
    tr = "concatenated evaluation traces"
    m, v = _mean(run, "onoff_model", 4, "tput", tr), _mean(run, "onoff_verus", 4, "tput", tr)
    assert 0.90 * v <= m < v, (m, v)
    assert _mean(run, "onoff_model", 4, "delay", tr) < _mean(run, "onoff_verus", 4, "delay", tr)
    for s in ("onoff_model", "onoff_verus"):
        assert all(_jain(r) >= 0.95 for r in _runs(run, s, 4, tr)), s


def test_the_report_explains_where_the_gaps_come_from(report):
    gaps = report.split("### Where the gaps come from")[1]
    assert "**The draw rule.**" in gaps and "**Quantization.**" in gaps


def test_collect_cli_writes_parquet_with_metadata_and_distinct_users(tmp_path):
    out = tmp_path / "s.parquet"
    r = CliRunner().invoke(app, ["markov", "collect", "--traces", str(TRACES), "--set", f"{TRAIN},{EVAL}",
                                 "--users", "1,2", "--seconds", "10", "-o", str(out)])
    assert r.exit_code == 0, r.output
    df = markov.load_samples(out)
    src = df.attrs["sources"][0]
    assert src["trace"] == f"{TRAIN},{EVAL}" and src["users"] == "1,2" and src["seed"] == 1
    raw = pd.read_parquet(out)
    # One run per (trace, users); no user id is shared between two runs.
    per_user = raw.groupby("user")[["trace", "users"]].nunique()
    assert (per_user == 1).all().all()
    assert raw.groupby(["trace", "users"]).user.nunique().to_dict() == {(TRAIN, 1): 1, (TRAIN, 2): 2, (EVAL, 1): 1, (EVAL, 2): 2}
    # 6 users in all: with no truncation every sample but each user's last starts one transition.
    assert markov.train(df, truncate=None).meta["transitions"] == len(df) - 6


def test_collect_rejects_a_missing_trace(tmp_path):
    r = CliRunner().invoke(app, ["markov", "collect", "--traces", str(TRACES), "--set", "nope.down", "-o",
                                 str(tmp_path / "x.parquet")])
    assert r.exit_code != 0
    assert "nope.down" in r.output


def test_collect_cli_records_per_packet_samples_on_request(tmp_path):
    # Paper 000 §4.1's wording: a sample for every packet (its ACK's delay, the window it was sent with).
    out, per_epoch = tmp_path / "p.parquet", tmp_path / "e.parquet"
    for record, path in (("packet", out), ("epoch", per_epoch)):
        r = CliRunner().invoke(app, ["markov", "collect", "--traces", str(TRACES), "--set", EVAL, "--seconds", "20",
                                     "--record", record, "-o", str(path)])
        assert r.exit_code == 0, r.output
    pk, ep = markov.load_samples(out), markov.load_samples(per_epoch)
    assert pk.attrs["sources"][0]["record"] == "packet" and ep.attrs["sources"][0]["record"] == "epoch"
    assert len(ep) == pytest.approx(20_000 / 5, rel=0.05)  # one per 5 ms epoch
    assert len(pk) > 1.5 * len(ep) and (pk["w"] >= 1).all()  # ~4 Mbit/s of 1450 B packets; a window is >= 1
    assert (ep["w"] == 0).mean() > 0.2  # per epoch, many epochs send nothing


@pytest.mark.parametrize("flag, value, words", [("--r", "0.5", "delay ratio must exceed 1"),
                                                 ("--ack", "foo", "expected one of uncongested, paired"),
                                                 ("--record", "both", "expected one of epoch, packet")])
def test_collect_rejects_a_bad_r_or_ack_path_and_writes_nothing(tmp_path, flag, value, words):
    out = tmp_path / "x.parquet"
    r = CliRunner().invoke(app, ["markov", "collect", "--traces", str(TRACES), "--set", EVAL, flag, value,
                                 "-o", str(out)])
    assert r.exit_code == 2 and words in r.output and not out.exists()


def test_papers_draw_sends_less_than_verus_with_one_user_and_more_with_four():
    # Paper 000 §6.3 (one user: Verus's throughput slightly higher) and §6.4 (four matching users: the
    # model "sends more packets than Verus"), measured on the chains alone at Verus's own transitions.
    df = markov.collect([TRACES / TRAIN], users=[1, 4], seconds=60, jobs=1)
    ratio = {n: markov.draw_bias(markov.train(df[df["users"] == n]), df[df["users"] == n])["ratio"] for n in (1, 4)}
    assert ratio[1] < 0.95 and ratio[4] > 1.2, ratio


def test_fast_links_companion_run_is_written_linked_and_summarised(tmp_path):
    out = tmp_path / "markov.md"
    r = CliRunner().invoke(app, ["repro", "markov", "-o", str(out), "--traces", str(TRACES), "--seconds", "20",
                                 "--seeds", "1", "--train", TRAIN, "--eval", EVAL])
    assert r.exit_code == 0, r.output
    main = out.read_text()
    section = main.split("## In the paper's link regime")[1]
    fast = [t.name for t in TRACES.iterdir() if t.suffix in (".down", ".up") and traces.trace_mean_mbps(t) >= rm.FAST_MBPS]
    assert fast, f"no recording in {TRACES} averages {rm.FAST_MBPS} Mbit/s"
    assert "[markov_fast_links.md](markov_fast_links.md)" in section
    assert "| (2b) non-matching clearly worse at 4 users |" in section
    sub = (tmp_path / "markov_fast_links.md").read_text()
    assert "a companion run" in sub and "## In the paper's link regime" not in sub
    for name in fast:
        stem, _, kind = name.rpartition(".")
        assert f"`{stem}-even.{kind}`" in sub and f"`{stem}-odd.{kind}`" in sub
