"""``benchmarks/RESULTS.md``: generated, current, and every figure from a committed result file.

* the committed file is exactly what ``scripts/gen_results.py`` makes now (it
  cannot drift from the result files);
* every result file it cites exists and is tracked by git, and every tracked
  result file has its provenance (``benchmarks/resultfile.py``: command,
  commit, machine, date; a sidecar's ``sha256`` matches the file it describes);
* every benchmark that writes ``--json`` output stamps it, and a stamped file
  names the exact command, the checkout's commit and the machine;
* scratch output in the ignored folder never reaches the page, and a tracked
  result without provenance stops the generator with the file's name.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
RESULTS_MD = BENCHMARKS / "RESULTS.md"
sys.path.insert(0, str(BENCHMARKS))

import resultfile  # noqa: E402


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return _load(ROOT / "scripts" / "gen_results.py", "gen_results_under_test")


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def test_results_md_is_what_the_generator_makes_now(gen: ModuleType) -> None:
    assert RESULTS_MD.read_text(encoding="utf-8") == gen.generate(), (
        "benchmarks/RESULTS.md is stale: run python scripts/gen_results.py"
    )


def test_every_result_file_it_cites_exists_and_is_tracked() -> None:
    cited = set(re.findall(r"benchmarks/results/[\w.+-]+\.json", RESULTS_MD.read_text("utf-8")))
    tracked = set(_git("ls-files", "--", "benchmarks/results").split())
    assert cited, "RESULTS.md cites no result file"
    assert sorted(c for c in cited if not (ROOT / c).is_file()) == []
    assert sorted(cited - tracked) == [], "cited but not committed (git add -f)"


def test_every_committed_result_has_its_provenance(gen: ModuleType) -> None:
    shallow = _git("rev-parse", "--is-shallow-repository").strip() == "true"
    results = gen.committed_results()
    assert results
    for rel in results:
        block, _ = resultfile.read_provenance(ROOT / rel)
        assert set(resultfile.FIELDS) <= set(block), rel
        assert set(resultfile.MACHINE_FIELDS) <= set(block["machine"]), rel
        assert (ROOT / block["script"]).is_file(), (rel, block["script"])
        if block["commit"] is not None and not shallow:
            _git("cat-file", "-e", f"{block['commit']}^{{commit}}")


def test_a_sidecar_describes_one_version_of_its_file(tmp_path: Path) -> None:
    result = tmp_path / "figures.json"
    result.write_text('{"r5": 0.5}\n', encoding="utf-8")
    with pytest.raises(resultfile.ProvenanceError, match=r"figures\.json: no provenance"):
        resultfile.read_provenance(result)
    block = {
        "script": "benchmarks/eval_updates.py",
        "command": None,
        "commit": None,
        "machine": {"cores": None, "python": None, "numpy": None},
        "date": None,
        "sha256": hashlib.sha256(result.read_bytes()).hexdigest(),
    }
    sidecar = tmp_path / "figures.provenance.json"
    sidecar.write_text(json.dumps(block), encoding="utf-8")
    assert resultfile.read_provenance(result) == (block, {"r5": 0.5})
    result.write_text('{"r5": 0.6}\n', encoding="utf-8")
    with pytest.raises(resultfile.ProvenanceError, match="sha256 differs"):
        resultfile.read_provenance(result)
    del block["date"]
    sidecar.write_text(json.dumps(block), encoding="utf-8")
    with pytest.raises(resultfile.ProvenanceError, match="lacks date"):
        resultfile.read_provenance(result)


def test_a_file_with_its_own_block_and_a_sidecar_is_refused(tmp_path: Path) -> None:
    result = tmp_path / "figures.json"
    stamped = resultfile.stamp({"r5": 0.5}, str(BENCHMARKS / "eval_updates.py"), [])
    result.write_text(json.dumps(stamped), encoding="utf-8")
    assert resultfile.read_provenance(result)[0] == stamped["provenance"]
    (tmp_path / "figures.provenance.json").write_text("{}", encoding="utf-8")
    with pytest.raises(resultfile.ProvenanceError, match=r"delete figures\.provenance\.json"):
        resultfile.read_provenance(result)


def test_stamp_names_the_command_commit_and_machine() -> None:
    argv = ["--split", "tune", "--json", "out dir/x.json"]
    stamped = resultfile.stamp(
        {"a": 1, "provenance": "old"}, str(BENCHMARKS / "eval_time.py"), argv
    )
    block = stamped["provenance"]
    assert list(stamped) == ["provenance", "a"]
    assert block["script"] == "benchmarks/eval_time.py"
    assert shlex.split(block["command"]) == ["python", "benchmarks/eval_time.py", *argv]
    assert block["commit"] == _git("rev-parse", "HEAD").strip()
    assert isinstance(block["uncommitted"], list)
    assert set(block["machine"]) == {"cores", "python", "numpy"}
    assert isinstance(block["machine"]["cores"], int)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", block["date"])
    assert resultfile.stamp([1, 2], str(BENCHMARKS / "bench_spectral.py"), [])["rows"] == [1, 2]


def test_a_benchmark_writes_its_provenance_with_its_json(tmp_path: Path) -> None:
    bench = _load(BENCHMARKS / "bench_spectral.py", "bench_spectral_under_test")
    out = tmp_path / "spectral.json"
    assert bench.main(["--sizes", "12", "--json", str(out)]) == 0
    written: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert written["provenance"]["command"] == (
        f"python benchmarks/bench_spectral.py --sizes 12 --json {shlex.quote(str(out))}"
    )
    assert [row["nodes"] for row in written["rows"]] == [12]


def test_every_benchmark_that_writes_json_stamps_it() -> None:
    option = re.compile(r'add_argument\(\s*"--json"')
    writers = [p for p in sorted(BENCHMARKS.glob("*.py")) if option.search(p.read_text("utf-8"))]
    assert len(writers) > 10
    unstamped = [p.name for p in writers if "stamp(" not in p.read_text(encoding="utf-8")]
    assert unstamped == []


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    _git("init", "-q", cwd=tmp_path)
    return tmp_path


def test_scratch_output_never_reaches_the_page(tmp_path: Path, gen: ModuleType) -> None:
    repo = _repo(tmp_path)
    argv = ["--nodes", "9", "--label", "a|b"]
    kept = resultfile.stamp({"r5": 0.25}, str(BENCHMARKS / "bench_store.py"), argv)
    (repo / "benchmarks/results/kept.json").write_text(json.dumps(kept), encoding="utf-8")
    untracked = repo / "benchmarks/results/untracked-run-q7x.json"
    untracked.write_text('{"r5": 0.99}', encoding="utf-8")
    _git("add", "-f", "benchmarks/results/kept.json", cwd=repo)
    page = gen.generate(repo)
    assert "`benchmarks/results/kept.json` (provenance in the file)" in page
    assert "`python benchmarks/bench_store.py --nodes 9 --label 'a\\|b'`" in page  # table-safe
    assert "| `r5` | 0.250 |" in page
    assert "untracked-run-q7x" not in page and "0.99" not in page


def test_a_tracked_result_without_provenance_is_an_error(tmp_path: Path, gen: ModuleType) -> None:
    repo = _repo(tmp_path)
    (repo / "benchmarks/results/bare.json").write_text('{"r5": 0.5}', encoding="utf-8")
    _git("add", "-f", "benchmarks/results/bare.json", cwd=repo)
    with pytest.raises(gen.ResultsError, match=r"bare\.json: no provenance block"):
        gen.generate(repo)


def test_a_renderer_names_the_field_it_misses(tmp_path: Path, gen: ModuleType) -> None:
    repo = _repo(tmp_path)
    odd = resultfile.stamp({"split_line": "x"}, str(BENCHMARKS / "eval_locomo.py"), [])
    (repo / "benchmarks/results/odd.json").write_text(json.dumps(odd), encoding="utf-8")
    _git("add", "-f", "benchmarks/results/odd.json", cwd=repo)
    with pytest.raises(gen.ResultsError, match=r"odd\.json: no field 'summary'"):
        gen.generate(repo)


def test_a_run_measuring_another_checkout_names_its_commit(tmp_path: Path) -> None:
    other = _repo(tmp_path)
    (other / "marker.txt").write_text("code under test\n", encoding="utf-8")
    _git("add", "marker.txt", cwd=other)
    _git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "x", cwd=other)
    (other / "marker.txt").write_text("changed\n", encoding="utf-8")
    script = str(BENCHMARKS / "bench_device.py")
    block = resultfile.stamp({}, script, ["--checkout", str(other)], other)["provenance"]
    assert block["commit"] == _git("rev-parse", "HEAD", cwd=other).strip()
    assert block["uncommitted"] == ["marker.txt"]
    assert block["bench_commit"] == _git("rev-parse", "HEAD").strip()
