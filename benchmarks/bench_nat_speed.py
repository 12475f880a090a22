"""Decoding speed of the NAT models against the AR teacher's beam search.

The pipeline measures every system with ``phenomt nat speed`` (rule ``nat_speed``: the first
``nat.speed.sentences`` test sentences at each of ``nat.speed.batch_sizes``, fairseq-generate's
inference time, one thread). This prints the speed-up table from those records, and, with
``--measure``, times one checkpoint afresh on a binarized test set.

    python benchmarks/bench_nat_speed.py [results/nat/*/speed/*.json ...]
    python benchmarks/bench_nat_speed.py --measure --data-bin D --model M.pt --system cmlm \\
        --batch-sizes 1 128
"""

from __future__ import annotations

import argparse
import glob
import json
import sys

from phenomt.core.tables import load_json
from phenomt.nat.recipes import generate_options
from phenomt.nat.tables import measure_speed, speed_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="*", help="speed JSON files of the pipeline")
    parser.add_argument("--measure", action="store_true", help="time one checkpoint instead")
    parser.add_argument("--data-bin", help="binarized data with a 'test' subset")
    parser.add_argument("--model", help="checkpoint to time")
    parser.add_argument("--system", default="ar", help="ar or a NAT model name (its decoding)")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 128])
    parser.add_argument("--sentences", type=int, help="the test subset's size (all must decode)")
    args = parser.parse_args(argv)

    if args.measure:
        if not (args.data_bin and args.model and args.sentences):
            parser.error("--measure needs --data-bin, --model and --sentences")
        options = {"beam": 5} if args.system == "ar" else generate_options(args.system)
        for m in measure_speed(args.data_bin, args.model, options, args.batch_sizes,
                               args.sentences):
            print(json.dumps(m, sort_keys=True))
        return 0

    paths = args.records or sorted(glob.glob("results/nat/*/speed/*.json"))
    if not paths:
        print("no speed records: run the pipeline's NAT stage first, or use --measure",
              file=sys.stderr)
        return 1
    frame = speed_table([load_json(p) for p in paths])
    print(frame.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
