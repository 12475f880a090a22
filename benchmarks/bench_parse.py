"""Print UDPipe parsing throughput: one process against contiguous shards in parallel.

Usage: python benchmarks/bench_parse.py [MODEL] [TOKENIZED_TEXT] [SHARDS]
Defaults: the mirror's german.udpipe on newstest2013.de (Moses-tokenized here), 2 shards.
The sharded run includes each shard's model load, as in the pipeline's scatter/gather rules.
"""

from __future__ import annotations

import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from phenomt.core.fetch import find_mirror
from phenomt.core.io import read_lines, write_lines
from phenomt.core.parse import merge_conllu, parse_file, split_text
from phenomt.core.text import tokenize

MIRROR = Path(find_mirror(None, Path(__file__).resolve().parents[1]) or "shared/data")


def _parse(job: tuple[str, str, str]) -> int:
    return parse_file(*job)


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else str(MIRROR / "udpipe/german.udpipe")
    shards = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if len(sys.argv) > 2:
            text = Path(sys.argv[2])
        else:
            text = work / "input.tok"
            raw = read_lines(MIRROR / "wmt/de-en/newstest2013.de")
            write_lines(text, (tokenize(line, "de") for line in raw))
        lines = read_lines(text)
        tokens = sum(len(line.split()) for line in lines)

        start = time.perf_counter()
        parse_file(model, text, work / "single.conllu")
        single = time.perf_counter() - start

        parts = [work / f"shard{i}.txt" for i in range(shards)]
        outs = [work / f"shard{i}.conllu" for i in range(shards)]
        start = time.perf_counter()
        split_text(text, parts)
        with ProcessPoolExecutor(shards) as pool:
            jobs = [(model, str(p), str(o)) for p, o in zip(parts, outs, strict=True)]
            list(pool.map(_parse, jobs))
        merge_conllu(outs, work / "sharded.conllu")
        sharded = time.perf_counter() - start
        same = (work / "single.conllu").read_bytes() == (work / "sharded.conllu").read_bytes()

    print(f"{len(lines)} sentences, {tokens} tokens, model {Path(model).name}")
    for name, seconds in (("1 process", single), (f"{shards} shards", sharded)):
        print(f"{name:>10}: {seconds:7.2f} s  {len(lines) / seconds:8.1f} sentences/s  "
              f"{tokens / seconds:9.1f} tokens/s")
    print(f"sharded output identical to single: {same}")


if __name__ == "__main__":
    main()
