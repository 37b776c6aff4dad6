#!/usr/bin/env python3
"""Step times of MLPerf Training results, for held-out checks (bench/heldout, scenarios/runs/).

Usage: calib/mlperf-steps.py CHECKOUT BENCHMARK > steps.tsv
  CHECKOUT   a git checkout (or bare mirror) of mlcommons/training_results_vX.Y
  BENCHMARK  the results subfolder, e.g. llama31_8b or llama31_405b

For every <org>/results/<system>/<BENCHMARK>/result_*.txt: the median of the logged
`train_step_time` (mllog `tracked_stats`) over steps >= 5 in each run, then the median over the
runs (the method of ../shared/validation/DECK.md for v5.x). Logs without a per-step timer (v4.x,
AMD's) print no step. Also the logged global_batch_size and gradient_accumulation_steps, and the
system JSON's accelerator and node counts; the parallel layout is in each submission's config_*.sh,
which the logs do not name.
"""
import json
import statistics
import subprocess
import sys
from collections import defaultdict


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def mllog(text):
    for line in text.splitlines():
        if ":::MLLOG " in line:
            try:
                yield json.loads(line.split(":::MLLOG ", 1)[1])
            except json.JSONDecodeError:
                continue


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    repo, bench = sys.argv[1], sys.argv[2]
    runs = defaultdict(list)
    for path in git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
        parts = path.split("/")
        if (len(parts) == 5 and parts[1] == "results" and parts[3] == bench
                and parts[4].startswith("result_") and parts[4].endswith(".txt")):
            runs[(parts[0], parts[2])].append(path)
    print(f"# {bench} step times from {repo} at {git(repo, 'rev-parse', 'HEAD').strip()}")
    print("org\tsystem\truns\tstep_s\tglobal_batch\tgrad_accum\taccelerator\tnodes\tper_node")
    for (org, system), paths in sorted(runs.items()):
        medians, gbs, ga = [], "", ""
        for path in paths:
            steps = []
            for rec in mllog(git(repo, "show", "HEAD:" + path)):
                key, value = rec.get("key"), rec.get("value")
                if key == "tracked_stats" and isinstance(value, dict) and "train_step_time" in value:
                    if rec.get("metadata", {}).get("step", 0) >= 5:
                        steps.append(value["train_step_time"])
                elif key == "global_batch_size":
                    gbs = value
                elif key == "gradient_accumulation_steps":
                    ga = value
            if steps:
                medians.append(statistics.median(steps))
        try:
            sysj = json.loads(git(repo, "show", f"HEAD:{org}/systems/{system}.json"))
        except (subprocess.CalledProcessError, json.JSONDecodeError):
            sysj = {}
        step = f"{statistics.median(medians):.4f}" if medians else ""
        print(f"{org}\t{system}\t{len(paths)}\t{step}\t{gbs}\t{ga}\t{sysj.get('accelerator_model_name', '')}\t"
              f"{sysj.get('number_of_nodes', '')}\t{sysj.get('accelerators_per_node', '')}")


if __name__ == "__main__":
    main()
