"""``python -m nlgjudge.bench gpu-speed`` (issue 49): its tiny form on the CPU, and its workload files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nlgjudge import bench
from nlgjudge.bench import gpu_speed


def test_the_tiny_form_runs_every_side_and_ends_with_the_ratio(capsys, tmp_path):
    out = tmp_path / "numbers.json"
    assert bench.main(["gpu-speed", "--tiny", "--chunks", "64", "1024", "--json", str(out)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].startswith("engine_vs_plain_batch16=") and float(printed[-1].split("=")[1]) > 0
    numbers = json.loads(out.read_text())
    sides = {s["label"]: s for s in numbers["sides"]}
    levels = next(s for label, s in sides.items() if "levels" in label)
    packed = [s for label, s in sides.items() if "packed" in label]
    plain16, plain1 = sides["plain, batches of 16 (left padding, last logits)"], next(s for label, s in sides.items() if "batch 1" in label)
    assert levels["default"] and not any(s["default"] for s in packed)  # the CPU keeps the level layout
    # The same 240 comparisons everywhere; the runners compute each distinct token once, the plain sides every prompt token.
    assert all(len(s["p_a"]) == 240 for s in sides.values())
    assert all(s["tokens"] == levels["tokens"] < plain16["tokens"] == plain1["tokens"] for s in packed)
    assert [s["calls"] for s in packed] == [-(-levels["tokens"] // 64), -(-levels["tokens"] // 1024)]
    assert all(s["rows"] == s["tokens"] for s in packed) and levels["rows"] > levels["tokens"]  # packing has no padding
    assert plain1["calls"] == 240 and plain16["calls"] == 15
    # fp32 on the CPU: every way of computing agrees far below bf16 noise.
    assert all(s["max_abs_diff_vs_reference"] < 1e-5 and s["same_side_vs_reference"] == 1.0 for s in sides.values())
    ratio = float(printed[-1].split("=")[1])
    assert ratio == pytest.approx(levels["comparisons_per_s"] / plain16["comparisons_per_s"], rel=0.01)


def test_a_workload_file_round_trips_and_bad_ones_are_refused(tmp_path, capsys):
    path = tmp_path / "w.json"
    assert gpu_speed.main(["--tiny", "--export-workload", str(path)]) == 0
    again = gpu_speed.Workload.from_json(path.read_text())
    assert again == gpu_speed.tiny_workload()
    assert len(again.prompts) == 240 and again.labels == [[5], [6]]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SystemExit) as stop:
        gpu_speed.main(["--workload", str(bad)])
    assert stop.value.code == 2 and "cannot be read as a workload file" in capsys.readouterr().err


def test_p_a_is_the_softmax_over_the_two_labels():
    values = gpu_speed._p_a(np.log(np.array([[0.3, 0.1], [0.02, 0.06]])))
    np.testing.assert_allclose(values, [0.75, 0.25])


def test_the_gpu_page_shows_the_measured_files():
    """book/gpu.md's tables and the numbers in its prose are those of the files in data/bench/."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    page = (root / "book" / "gpu.md").read_text()
    files = sorted((root / "data" / "bench").glob("gpu-speed-*.json"))
    assert len(files) == 3
    numbers = {f.stem: json.loads(f.read_text()) for f in files}
    for measured in numbers.values():
        assert gpu_speed.markdown_table(measured) in page
    page = " ".join(page.split())  # prose is wrapped
    qwen = {s["label"]: s for s in numbers["gpu-speed-h100-qwen2.5-coder-1.5b-random"]["sides"]}
    default = next(s for s in qwen.values() if s["default"])
    plain16 = qwen["plain, batches of 16 (left padding, last logits)"]
    batch1 = next(s for label, s in qwen.items() if "batch 1" in label)
    ratio = default["comparisons_per_s"] / plain16["comparisons_per_s"]
    assert f"\"engine vs plain batch 16 = {ratio:.2f}\"" in page and f"{ratio:.2f} times the plain batches of 16" in page
    assert f"{default['comparisons_per_s'] / batch1['comparisons_per_s']:.0f} times one prompt at a time" in page
    shares = [f"{qwen[label]['kernel_share']:.0%}" for label in
              ("runtime: levels (padded rows)", default["label"], "runtime: packed, 8192-token chunks, sdpa")]
    assert f"busy {shares[0]} of the level runner's time, {shares[1]} of the default's and {shares[2]} of the 8,192-token" in page
    assert f"({qwen['runtime: packed, 8192-token chunks, flex']['comparisons_per_s']:,.1f} comparisons/s" in page
    gpu = next(s for s in numbers["gpu-speed-h100-smollm2-135m-gguf"]["sides"] if s["default"])
    cpu = next(s for s in numbers["gpu-speed-h100-host-cpu-smollm2-135m-gguf"]["sides"] if s["default"])
    diff = np.abs(np.array(gpu["p_a"]) - np.array(cpu["p_a"]))
    same = int(np.sum((np.array(gpu["p_a"]) > 0.5) == (np.array(cpu["p_a"]) > 0.5)))
    assert f"at most {diff.max():.4f} (mean {diff.mean():.4f})" in page
    assert same == len(diff) and f"in all {len(diff)} comparisons" in page
