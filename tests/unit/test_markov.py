"""The (delay, window) Markov chain of paper 000: training (§4, Eq. 5), the .ccm format, the CLI."""

from __future__ import annotations

import json
import struct

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ccscope import ScenarioError
from ccscope.cli import app
from ccscope.models import markov as mk


def synth(n: int = 50_000, users: int = 3, seed: int = 7) -> pd.DataFrame:
    """A seeded random walk in d (>= 20 ms, rare spikes) and w (0..35) per user, one sample per 5 ms."""
    g = np.random.default_rng(seed)
    per = n // users
    frames = []
    for u in range(users):
        d = np.clip(40 + np.cumsum(g.integers(-2, 3, per)), 20, 400)
        d = d + (g.random(per) < 0.0005) * g.integers(500, 900, per)
        w = np.clip(10 + np.cumsum(g.integers(-1, 2, per)), 0, 35)
        frames.append(
            pd.DataFrame({"user": u, "t_ms": np.arange(per) * 5.0, "d_ms": d.astype(np.int64), "w": w.astype(np.int64)})
        )
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def samples() -> pd.DataFrame:
    return synth()


@pytest.fixture(scope="module")
def model(samples) -> mk.MarkovModel:
    return mk.train(samples, quantize_ms=2, truncate=99.9)


def write_parquet(df: pd.DataFrame, path, **meta) -> None:
    table = pa.Table.from_pandas(df, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **{k: str(v) for k, v in meta.items()}})
    pq.write_table(table, path)


def test_nonempty_rows_sum_to_one_eq5(model):
    P = model.P
    nonempty = np.diff(P.indptr) > 0
    sums = np.asarray(P.sum(axis=1)).ravel()
    assert nonempty.any()
    assert np.all(np.abs(sums[nonempty] - 1.0) <= 1e-12)
    assert np.all(sums[~nonempty] == 0)  # states never left stay all-zero rows
    assert P.shape == (model.m, model.m) and model.m == model.n_d * model.n_w


def test_two_trainings_are_byte_identical(samples, tmp_path):
    a = mk.train(samples).save(tmp_path / "a.ccm").read_bytes()
    shuffled = samples.sample(frac=1.0, random_state=3)  # row order must not matter
    b = mk.train(shuffled).save(tmp_path / "b.ccm").read_bytes()
    assert a == b


def test_save_load_round_trips(model, tmp_path):
    path = model.save(tmp_path / "m.ccm")
    back = mk.MarkovModel.load(path)
    assert np.array_equal(back.P.indptr, model.P.indptr)
    assert np.array_equal(back.P.indices, model.P.indices)
    assert np.array_equal(back.P.data, model.P.data)
    assert back.meta == json.loads(json.dumps(model.meta))
    assert mk.inspect(back)["file_bytes"] == path.stat().st_size == model.file_size()


def test_file_layout_matches_spec(model):
    blob = model.to_bytes()
    magic, version, meta_len = struct.unpack_from("<8sII", blob, 0)
    assert (magic, version) == (b"CCSCOPEM", 2)
    meta = json.loads(blob[16 : 16 + meta_len])
    assert set(meta) == set(mk.META_KEYS)
    n_states, n_rows, nnz = struct.unpack_from("<QQQ", blob, 16 + meta_len)
    assert n_states == meta["n_d"] * meta["n_w"] and nnz == model.P.nnz
    # Only the non-empty rows are stored: their ids, then their pointers.
    nonempty = np.flatnonzero(np.diff(model.P.indptr) > 0)
    assert n_rows == len(nonempty) < n_states
    at = 16 + meta_len + 24
    assert np.frombuffer(blob, "<u4", n_rows, at).tolist() == nonempty.tolist()
    ptr = np.frombuffer(blob, "<u8", n_rows + 1, at + 4 * n_rows)
    assert ptr[0] == 0 and ptr[-1] == nnz and (np.diff(ptr) > 0).all()
    assert len(blob) == 16 + meta_len + 24 + 12 * n_rows + 8 + 12 * nnz + 8 == model.file_size()
    assert struct.unpack("<Q", blob[-8:])[0] == mk.fnv1a64(blob[:-8], pure=True)


def test_fnv1a_known_vectors():
    for fn in (lambda b: mk.fnv1a64(b, pure=True), mk.fnv1a64):
        assert fn(b"") == 0xCBF29CE484222325
        assert fn(b"a") == 0xAF63DC4C8601EC8C
        assert fn(b"foobar") == 0x85944171F73967E8


def test_coarser_quantization_shrinks_state_space(samples):
    n_d = []
    for q in (1, 2, 5, 10, 20):
        m = mk.train(samples, quantize_ms=q)
        span = m.meta["d_max_ms"] - m.meta["d_min_ms"]
        assert m.n_d == span // q + 1  # Eq. 6 with d in q-ms intervals
        assert m.m == m.n_d * m.n_w
        n_d.append(m.n_d)
    assert n_d == sorted(n_d, reverse=True) and len(set(n_d)) == 5


def test_paper_table2_dimensions_from_its_ranges():
    # Fig. 5a: d in 20..727 ms, w in 0..35 -> Table 2: m = 25488, 12744, 5112, 2556, 1296.
    df = pd.DataFrame({"user": 0, "t_ms": [0.0, 5.0, 10.0, 15.0], "d_ms": [20, 727, 20, 727], "w": [0, 35, 35, 0]})
    got = [mk.train(df, quantize_ms=q, truncate=None).m for q in (1, 2, 5, 10, 20)]
    assert got == [25488, 12744, 5112, 2556, 1296]


def test_truncation_at_99_9_drops_top_tenth_of_a_percent(samples):
    thr = np.percentile(samples["d_ms"], 99.9)
    m = mk.train(samples, truncate=99.9)
    full = mk.train(samples, truncate=None)
    dropped = len(samples) - m.meta["samples"]
    assert 0 < dropped <= 0.001 * len(samples) + 1
    assert dropped == int((samples["d_ms"] > thr).sum())
    assert m.meta["d_max_ms"] <= thr < full.meta["d_max_ms"]
    assert m.m < full.m


def test_hand_counted_transitions():
    # user 0: (10,1)->(11,1)->(10,1)->(11,2); user 1: (10,1)->(10,1). q = 1, d_min 10, w 1..2, n_w 2.
    df = pd.DataFrame(
        {
            "user": [0, 1, 0, 0, 1, 0],
            "t_ms": [0.0, 0.0, 5.0, 10.0, 5.0, 15.0],
            "d_ms": [10, 10, 11, 10, 10, 11],
            "w": [1, 1, 1, 1, 1, 2],
        }
    )
    m = mk.train(df, quantize_ms=1, truncate=None)
    s = m.state
    assert (m.n_d, m.n_w, m.meta["transitions"]) == (2, 2, 4)
    P = m.P.toarray()  # 4 x 4: tiny by construction
    expect = np.zeros((4, 4))
    expect[s(10, 1), s(11, 1)] = 1 / 3  # (10,1) left 3 times: ->(11,1), ->(11,2), ->(10,1)
    expect[s(10, 1), s(11, 2)] = 1 / 3
    expect[s(10, 1), s(10, 1)] = 1 / 3
    expect[s(11, 1), s(10, 1)] = 1.0
    assert np.array_equal(P, expect)  # row (11,2) and (10,2) never left: all-zero


def test_quantized_hand_count_uses_intervals():
    df = pd.DataFrame({"user": 0, "t_ms": [0.0, 1.0, 2.0], "d_ms": [20, 21, 23], "w": [0, 0, 0]})
    m = mk.train(df, quantize_ms=2, truncate=None)
    assert m.n_d == 2 and m.interval(1) == (22, 24)
    assert m.P[0, 0] == 0.5 and m.P[0, 1] == 0.5  # 20->21 stays in [20,22), 21->23 moves to [22,24)


def corrupt(tmp_path, blob: bytes, name: str = "bad.ccm"):
    p = tmp_path / name
    p.write_bytes(blob)
    with pytest.raises(ScenarioError) as ei:
        mk.MarkovModel.load(p)
    msg = str(ei.value)
    assert "\n" not in msg and msg.startswith(str(p) + ": ")
    return msg


def test_corrupt_files_give_one_line_errors(model, tmp_path):
    blob = bytearray(model.to_bytes())
    flipped = bytearray(blob)
    flipped[len(flipped) - 20] ^= 0x01
    assert "checksum mismatch (file corrupt)" in corrupt(tmp_path, bytes(flipped))
    msg = corrupt(tmp_path, bytes(blob[:1000]))
    assert "truncated: expected" in msg and "bytes of CSR data, found" in msg
    assert "truncated" in corrupt(tmp_path, bytes(blob[:10]))
    assert "bad magic" in corrupt(tmp_path, b"NOTAMODL" + bytes(blob[8:]))
    wrong = bytearray(blob)
    wrong[8:12] = struct.pack("<I", 1)
    assert "unsupported version 1" in corrupt(tmp_path, bytes(wrong))
    assert "trailing bytes" in corrupt(tmp_path, bytes(blob) + b"x")
    with pytest.raises(ScenarioError, match="no such model file"):
        mk.MarkovModel.load(tmp_path / "absent.ccm")


def test_structural_checks_behind_a_valid_checksum(model, tmp_path):
    blob = bytearray(model.to_bytes()[:-8])
    meta_len = struct.unpack_from("<I", blob, 12)[0]
    n_rows = int(np.count_nonzero(np.diff(model.P.indptr) > 0))
    data_off = 16 + meta_len + 24 + 12 * n_rows + 8 + 4 * model.P.nnz
    struct.pack_into("<d", blob, data_off, 0.25)  # first row no longer sums to 1
    blob += struct.pack("<Q", mk.fnv1a64(bytes(blob)))
    assert "sums to" in corrupt(tmp_path, bytes(blob))


def test_missing_column_names_file_and_column(samples, tmp_path):
    p = tmp_path / "s.parquet"
    write_parquet(samples.drop(columns=["w"]), p)
    with pytest.raises(ScenarioError, match=r"s\.parquet: missing column `w`"):
        mk.load_samples([p])
    write_parquet(samples.assign(d_ms=samples["d_ms"] + 0.5), p)
    with pytest.raises(ScenarioError, match=r"column `d_ms`: expected integer"):
        mk.load_samples(p)


def test_parquet_metadata_becomes_sources(samples, tmp_path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    write_parquet(samples, a, trace="att-lte", users=3, seed=1)
    write_parquet(samples, b, trace="tmobile", users=3, seed=2)
    m = mk.train([a, b])
    assert m.meta["sources"] == [
        {"file": "a.parquet", "trace": "att-lte", "users": 3, "seed": 1},
        {"file": "b.parquet", "trace": "tmobile", "users": 3, "seed": 2},
    ]
    # same users in two files: no transition crosses a file boundary
    assert m.meta["transitions"] == 2 * mk.train(samples).meta["transitions"]


def test_cli_train_and_inspect(samples, tmp_path):
    p = tmp_path / "s.parquet"
    write_parquet(samples, p)
    out, png = tmp_path / "m.ccm", tmp_path / "h.png"
    runner = CliRunner()
    r = runner.invoke(app, ["markov", "train", str(p), "--quantize", "5", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "train_s" in r.output and out.exists()
    r = runner.invoke(app, ["markov", "inspect", str(out), "--heatmap", str(png), "--zoom", "2"])
    assert r.exit_code == 0, r.output
    assert "nnz" in r.output and png.stat().st_size > 0


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_inspect_replaces_its_own_heatmap_and_refuses_a_figure_ccscope_did_not_write(samples, tmp_path, fmt):
    import matplotlib.pyplot as plt

    m = tmp_path / "m.ccm"
    mk.train(samples, quantize_ms=5).save(m)
    runner = CliRunner()
    own = tmp_path / f"h.{fmt}"
    for _ in range(2):  # the second run replaces the figure the first one wrote
        r = runner.invoke(app, ["markov", "inspect", str(m), "--heatmap", str(own)])
        assert r.exit_code == 0, r.output
    # The user's own figure, drawn by matplotlib as ccscope draws its own: left as it is, one line, exit 2.
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    theirs = tmp_path / f"theirs.{fmt}"
    fig.savefig(theirs)
    plt.close(fig)
    before = theirs.read_bytes()
    r = runner.invoke(app, ["markov", "inspect", str(m), "--heatmap", str(theirs)])
    assert r.exit_code == 2, r.output
    assert f"--heatmap {theirs}: theirs.{fmt} is there and is not a figure ccscope wrote" in r.output
    assert theirs.read_bytes() == before


def test_closest_draw_expects_each_probability_levels_lowest_window_in_proportion_to_its_cell():
    # Paper 000 §3.2: N uniform in [0.1, 0.6]; levels 0.1 / 0.3 / 0.6 own [0.1, 0.2) / [0.2, 0.45) / [0.45, 0.6].
    assert mk._closest_mean_w(np.array([0.6, 0.3, 0.1]), np.array([0, 1, 2])) == pytest.approx(0.2 * 2 + 0.5 * 1)
    # Two windows at one level: the lower one wins the level (as the controller's tie rule).
    assert mk._closest_mean_w(np.array([0.25, 0.5, 0.25]), np.array([4, 2, 1])) == pytest.approx(0.5 * 1 + 0.5 * 2)
    assert mk._closest_mean_w(np.array([0.5, 0.5]), np.array([3, 7])) == 3


def test_draw_bias_of_a_rare_large_window_is_a_coin_toss_against_a_proportional_step():
    # One user: nine transitions (30 ms, 0) -> (30 ms, 0), one (30 ms, 0) -> (30 ms, 3).
    d = [30] * 11
    w = [0] * 10 + [3]
    df = pd.DataFrame({"user": 0, "t_ms": np.arange(11) * 5.0, "d_ms": d, "w": w})
    b = mk.draw_bias(mk.train(df, quantize_ms=2, truncate=None), df)
    assert b["transitions"] == 10 and b["no_subset"] == 0
    assert b["chain_w"] == pytest.approx(0.3)  # 0.9 x 0 + 0.1 x 3: what the user sent on average
    assert b["closest_w"] == pytest.approx(1.5)  # each level half the time
    assert b["ratio"] == pytest.approx(5.0)
    assert b["levels"] == 2 and b["off_grid"] == 0  # levels 0.9 and 0.1
    # A last sample above the model's delay range: one transition the controller would clamp.
    late = pd.concat([df, pd.DataFrame({"user": [0], "t_ms": [55.0], "d_ms": [100], "w": [0]})], ignore_index=True)
    assert mk.draw_bias(mk.train(df, quantize_ms=2, truncate=None), late)["off_grid"] == 1
    assert mk.draw_bias(mk.train(df, quantize_ms=2, truncate=None), df, min_delay_ms=30)["transitions"] == 10
    none = mk.draw_bias(mk.train(df, quantize_ms=2, truncate=None), df, min_delay_ms=31)
    assert none["transitions"] == 0 and np.isnan(none["ratio"])


def test_draw_bias_counts_transitions_a_model_has_no_subset_for(model, samples):
    shifted = samples.assign(d_ms=samples["d_ms"] + 2)  # same walk, delays one interval up
    b = mk.draw_bias(model, shifted)
    assert b["no_subset"] > 0 and b["transitions"] > 0
    assert mk.draw_bias(model, samples)["no_subset"] == 0  # its own samples always have a subset


def test_cli_inspect_prints_the_draw_bias_at_sample_transitions(samples, tmp_path):
    p = tmp_path / "s.parquet"
    write_parquet(samples, p)
    out = tmp_path / "m.ccm"
    runner = CliRunner()
    assert runner.invoke(app, ["markov", "train", str(p), "-o", str(out)]).exit_code == 0
    r = runner.invoke(app, ["markov", "inspect", str(out), "--samples", str(p)])
    assert r.exit_code == 0, r.output
    assert "closest_w" in r.output and "chain_w" in r.output and "ratio" in r.output


def test_interleaved_split_alternates_stretches_between_the_sets_and_drops_none_but_the_last(tmp_path):
    from ccscope import traces

    # Opportunities every 3 ms over 35 s: 10 s stretches 0 and 2 train, 1 evaluates, [30, 35) s is dropped.
    ts = np.arange(1, 35_000, 3)
    (tmp_path / "x.down").write_text("\n".join(map(str, ts)) + "\n")
    train, evaluate = traces.interleaved_split(tmp_path, ["x.down"], 10, tmp_path)
    assert train == ["x-even.down"] and evaluate == ["x-odd.down"]
    even = np.loadtxt(tmp_path / "x-even.down", dtype=np.int64)
    odd = np.loadtxt(tmp_path / "x-odd.down", dtype=np.int64)
    assert even[-1] == 20_000 and odd[-1] == 10_000  # each loops on its stretches' length
    want_even = np.concatenate([ts[ts < 10_000], ts[(ts >= 20_000) & (ts < 30_000)] - 10_000])
    assert np.array_equal(even[:-1], want_even)
    assert np.array_equal(odd[:-1], ts[(ts >= 10_000) & (ts < 20_000)] - 10_000)
    assert np.all(np.diff(even[:-1]) >= 0) and np.all(np.diff(odd[:-1]) >= 0)


def test_cli_bad_sample_file_exits_2_with_one_line(samples, tmp_path):
    p = tmp_path / "bad.parquet"
    write_parquet(samples.drop(columns=["d_ms"]), p)
    r = CliRunner().invoke(app, ["markov", "train", str(p), "-o", str(tmp_path / "m.ccm")])
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "missing column `d_ms`" in lines[0]
    assert not (tmp_path / "m.ccm").exists()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(40, 80), st.integers(0, 12)), min_size=2, max_size=300),
       st.sampled_from([1, 2, 5]))
def test_any_trained_model_round_trips_through_its_file_bytes(rows, q):
    df = pd.DataFrame(rows, columns=["user", "d_ms", "w"]).assign(t_ms=lambda d: np.arange(len(d), dtype=float))
    model = mk.train(df[["user", "t_ms", "d_ms", "w"]], quantize_ms=q, truncate=None)
    back = mk.MarkovModel.from_bytes(model.to_bytes())
    assert back.meta == model.meta
    assert (back.P != model.P).nnz == 0 and back.P.shape == model.P.shape
    assert len(model.to_bytes()) == model.file_size()


def test_a_crafted_huge_grid_is_refused_before_anything_is_allocated(model, tmp_path):
    meta = dict(model.meta, n_d=1 << 15, n_w=1 << 15, w_min=0, w_max=(1 << 15) - 1)
    mb = json.dumps({k: meta[k] for k in mk.META_KEYS}, sort_keys=True, separators=(",", ":")).encode()
    body = struct.pack("<8sII", b"CCSCOPEM", 2, len(mb)) + mb + struct.pack("<QQQ", 1 << 30, 0, 0) + struct.pack("<Q", 0)
    blob = body + struct.pack("<Q", mk.fnv1a64(body))
    assert "too many states" in corrupt(tmp_path, blob)


def test_concatenated_trace_keeps_each_segment_and_loops_on_its_full_length(tmp_path):
    from ccscope.traces import concat_trace

    (tmp_path / "a.down").write_text("0\n5\n10\n")  # period 10 ms: loops to fill the segment
    (tmp_path / "b.down").write_text("3\n3\n40\n")
    out = concat_trace(tmp_path, ["a.down", "b.down"], 0.02, tmp_path / "c.trace")
    ts = [int(x) for x in out.read_text().split()]
    assert ts == [0, 5, 10, 10, 15] + [23, 23] + [40]
    assert ts == sorted(ts)


def test_cli_train_replaces_a_model_it_wrote_but_no_other_file(samples, tmp_path):
    p = tmp_path / "s.parquet"
    write_parquet(samples, p)
    out = tmp_path / "m.ccm"
    runner = CliRunner()
    for q in ("5", "10"):
        r = runner.invoke(app, ["markov", "train", str(p), "--quantize", q, "-o", str(out)])
        assert r.exit_code == 0, r.output
    assert mk.MarkovModel.load(out).meta["quantize_ms"] == 10
    r = runner.invoke(app, ["markov", "train", str(p), "-o", str(p)])
    assert r.exit_code == 2 and "is not a .ccm model ccscope wrote" in r.output
    assert mk.is_samples_file(p) and not mk.is_model_file(p)


# The API keeps the CLI's rule: it replaces a file ccscope wrote (a .ccm model, a sample file, a figure bearing
# ccscope's mark) and never a user's, naming its own argument (`path`, `out_png`).


def _users_picture(path) -> bytes:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    fig.savefig(path)
    plt.close(fig)
    return path.read_bytes()


def test_model_save_replaces_a_model_but_refuses_a_users_file(model, tmp_path):
    from ccscope.store import OutputError

    own = tmp_path / "m.ccm"
    model.save(own)
    model.save(own)  # a model ccscope wrote: replaced
    notes = tmp_path / "notes.ccm"
    notes.write_text("my notes")
    with pytest.raises(OutputError) as e:
        model.save(notes)
    assert str(e.value) == f"path {notes}: notes.ccm is there and is not a .ccm model ccscope wrote; move it away first"
    with pytest.raises(OutputError, match=f"^path {tmp_path}: is a folder"):
        model.save(tmp_path)
    assert notes.read_text() == "my notes" and mk.MarkovModel.load(own).meta == model.meta


def test_save_samples_replaces_a_sample_file_but_refuses_a_users_file(samples, tmp_path):
    from ccscope.store import OutputError

    own = tmp_path / "s.parquet"
    mk.save_samples(samples.head(100), own)
    mk.save_samples(samples.head(50), own)  # a sample file: replaced
    assert len(mk.load_samples(own)) == 50
    theirs = tmp_path / "theirs.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), theirs)
    before = theirs.read_bytes()
    with pytest.raises(OutputError) as e:
        mk.save_samples(samples.head(10), theirs)
    assert str(e.value) == f"path {theirs}: theirs.parquet is there and is not a sample file ccscope wrote; move it away first"
    assert theirs.read_bytes() == before


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_heatmap_replaces_its_own_figure_but_refuses_a_users(model, tmp_path, fmt):
    from ccscope.store import OutputError

    own = tmp_path / f"h.{fmt}"
    for _ in range(2):  # the second call replaces the marked figure the first one wrote
        assert mk.heatmap(model, own, max_pixels=50) == own
    theirs = tmp_path / f"theirs.{fmt}"
    before = _users_picture(theirs)
    with pytest.raises(OutputError) as e:
        mk.heatmap(model, theirs, max_pixels=50)
    assert str(e.value) == f"out_png {theirs}: theirs.{fmt} is there and is not a figure ccscope wrote; move it away first"
    assert theirs.read_bytes() == before


def test_heatmap_refuses_a_name_that_is_not_a_figure_format(model, tmp_path):
    from ccscope.store import OutputError

    with pytest.raises(OutputError, match=r"^out_png \S+h\.txt: give a file name ending in one of png, svg, pdf$"):
        mk.heatmap(model, tmp_path / "h.txt")
    assert list(tmp_path.iterdir()) == []


def test_a_zoom_out_of_range_names_the_argument_and_the_command_names_its_option(model, tmp_path):
    with pytest.raises(ScenarioError) as e:
        mk.heatmap(model, tmp_path / "h.png", zoom_interval=model.n_d)
    assert str(e.value) == f"zoom_interval={model.n_d}: interval out of range 0..{model.n_d - 1}"
    m = tmp_path / "m.ccm"
    model.save(m)
    r = CliRunner().invoke(app, ["markov", "inspect", str(m), "--heatmap", str(tmp_path / "h.png"), "--zoom",
                                 str(model.n_d)])
    assert r.exit_code == 2 and f"error: --zoom {model.n_d}: interval out of range" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ccm"]


def test_an_upper_case_suffix_is_written_under_the_name_given_and_marked(model, tmp_path):
    from ccscope.analysis.figures import is_marked_figure

    out = tmp_path / "H.PNG"
    assert mk.heatmap(model, out, max_pixels=50) == out
    assert [p.name for p in tmp_path.iterdir()] == ["H.PNG"] and is_marked_figure(out)
