"""experiments/mahimahi/hystart_trace.py: a kernel trace (tcp_probe and net_dev_start_xmit lines) becomes the
slow-start fixture `linux_hystart_kernel.rs` replays, and what it cannot read is one error line, exit 2,
with nothing written."""

from __future__ import annotations

import pytest

from _experiments import load_experiment

ht = load_experiment("mahimahi", "hystart_trace")

ISN = 0x1000


def xmit(t: str, data_len: int = 1448, dev: str = "ingress") -> str:
    return (f"  python3-1 [001] b..1. {t}: net_dev_start_xmit: dev={dev} queue_mapping=0 skbaddr=0 "
            f"len={data_len + 52} data_len={data_len} network_offset=0")


def probe(t: str, una: int, nxt: int, cwnd: int, ssthresh: int = 2147483647, dest: str = "10.0.0.1:9001") -> str:
    return (f"  mm-link-2 [001] b..1. {t}: tcp_probe: family=AF_INET src=10.0.0.4:5 dest={dest} mark=0x0 "
            f"data_len=0 snd_nxt={ISN + nxt * 1448:#x} snd_una={ISN + una * 1448:#x} snd_cwnd={cwnd} "
            f"ssthresh={ssthresh} snd_wnd=65160 srtt=42000 rcv_wnd=64512 sock_cookie=2")


def test_sends_and_acks_become_rows_in_packets_and_stop_five_acks_after_ssthresh_is_set(tmp_path):
    lines = [xmit("100.000000"), xmit("100.000010"),
             probe("100.040000", 0, 2, 10), probe("100.041000", 1, 2, 11),
             probe("100.042000", 2, 2, 12, ssthresh=12)]
    lines += [probe(f"100.0{43 + i}000", 2, 2, 12, ssthresh=12) for i in range(6)]
    # The receiver's own probes (to another port) are not the sender's ACKs.
    lines.append(probe("100.041500", 1, 2, 99, dest="10.0.0.2:33706"))
    src, out = tmp_path / "trace.txt", tmp_path / "fixture.csv"
    src.write_text("# tracer: nop\n" + "\n".join(lines) + "\n")
    assert ht.main([str(src), str(out)]) == 0
    rows = out.read_text().splitlines()
    assert rows[0] == "event,t_us,packet_or_una,nxt,cwnd,ssthresh"
    assert rows[1:6] == ["send,0,0", "send,10,1", "ack,40000,0,2,10,2147483647", "ack,41000,1,2,11,2147483647",
                         "ack,42000,2,2,12,12"]
    # ssthresh first set at ACK 2: ACKs 0-6 kept.
    assert len([r for r in rows if r.startswith("ack,")]) == 7


@pytest.mark.parametrize("text, what", [
    ("", "no data packets"),
    (xmit("1.000000") + "\n" + probe("1.040000", 0, 1, 10) + "\n" + probe("1.041000", 1, 1, 11) + "\n",
     "ssthresh never set"),
    (xmit("1.000000", data_len=900) + "\n" + probe("1.040000", 0, 1, 10) + "\n"
     + probe("1.041000", 1, 1, 10, ssthresh=10) + "\n", "has 900 bytes"),
])
def test_a_trace_it_cannot_use_is_one_error_line_and_writes_nothing(tmp_path, capsys, text, what):
    src, out = tmp_path / "trace.txt", tmp_path / "fixture.csv"
    src.write_text(text)
    with pytest.raises(SystemExit) as e:
        ht.main([str(src), str(out)])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and what in err[0], err
    assert not out.exists()


def test_an_existing_output_file_is_never_overwritten(tmp_path, capsys):
    src, out = tmp_path / "trace.txt", tmp_path / "fixture.csv"
    src.write_text(xmit("1.000000") + "\n")
    out.write_text("mine\n")
    with pytest.raises(SystemExit) as e:
        ht.main([str(src), str(out)])
    assert e.value.code == 2
    assert out.read_text() == "mine\n"


def _usable_trace(tmp_path):
    src = tmp_path / "trace.txt"
    src.write_text("\n".join([xmit("1.000000"), xmit("1.000010"), probe("1.040000", 0, 2, 10),
                              probe("1.041000", 1, 2, 11), probe("1.042000", 2, 2, 12, ssthresh=12)]) + "\n")
    return src


def test_an_output_in_a_missing_folder_is_one_error_line(tmp_path, capsys):
    out = tmp_path / "none" / "fixture.csv"
    with pytest.raises(SystemExit) as e:
        ht.main([str(_usable_trace(tmp_path)), str(out)])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {out}: cannot write: "), err


def test_a_file_in_the_way_of_the_temporary_output_is_left_alone(tmp_path, capsys):
    out = tmp_path / "fixture.csv"
    theirs = tmp_path / "fixture.csv.tmp"
    theirs.write_text("not ours\n")
    with pytest.raises(SystemExit) as e:
        ht.main([str(_usable_trace(tmp_path)), str(out)])
    assert e.value.code == 2
    assert theirs.read_text() == "not ours\n" and not out.exists()
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {theirs}: exists; move it or choose another OUT_CSV"]
