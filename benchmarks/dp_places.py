"""Benchmark: communes under ``deidentify --privacy dp`` against today's random draw — utility and speed.

    .venv/bin/python benchmarks/dp_places.py [--workdir /tmp/deid-dp-places] [--notes 2000] [--seed 3]
        [--epsilons 1,5,20] [--ks 5,10,25] [--national 35000]

Two measurements:

1. **A generated corpus** (``deid-ds synth --geography france``, its BAN files built with ``build-kb``): every
   commune the notes name (gold ``VILLE`` spans and the patients' ``city``) that the knowledge base knows, replaced
   once per patient through the real path (:func:`deid_ds.deidentification.places.commune_for`) with
   ``--privacy shift`` (today: a keyed draw among all communes) and ``dp`` for each ε and k. Reported: the size
   ratio surrogate / original (median, p25–p75, share within a factor of 2) and the distance in km (median, p90).
   The generated BAN's address counts are synthetic (tens to hundreds per commune), so the size figures there
   say little; the distances do.
2. **A national-size table** of 35,000 communes (random positions over mainland France, log-normal sizes: a
   few large towns, many villages), standing in for the real BAN that cannot be downloaded here: the same
   figures with originals drawn in proportion to size (where people live), the time to build the index and to
   find a commune's k nearest, and how many communes each surrogate may stand for (reverse neighbours).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from machine import cpu_model  # noqa: E402

from deid_ds.deidentification.similar_communes import (  # noqa: E402
    build_index,
    distribution,
    haversine_km,
    nearest,
    pick,
    reverse_neighbours,
)


def summary(ratios: list[float], km: list[float]) -> str:
    r, d = np.asarray(ratios), np.asarray(km)
    p25, p50, p75 = np.percentile(r, [25, 50, 75])
    within = float(np.mean((r >= 0.5) & (r <= 2.0)))
    km_median, km_p90 = np.median(d), np.percentile(d, 90)
    return f"| {len(r):,} | {p50:.2f} | {p25:.2f}–{p75:.2f} | {within:.0%} | {km_median:.0f} | {km_p90:.0f} |"


HEADER = (
    "| draw | n | size ratio median | p25–p75 | within ×2 | km median | km p90 |\n|---|---:|---:|---:|---:|---:|---:|"
)


def corpus(workdir: Path, notes: int, seed: int, epsilons: list[float], ks: list[int], hoods: list[str]) -> None:
    import pyarrow.parquet as pq

    from deid_ds.deidentification.context import Context
    from deid_ds.deidentification.keyed import Keyring
    from deid_ds.deidentification.places import commune_for, similar_places
    from deid_ds.deidentification.pools import load_pools
    from deid_ds.deidentification.privacy import Privacy
    from deid_ds.kb.normalize import fold_key
    from deid_ds.model import PatientMetadata

    out, kb = workdir / "synth", workdir / "kb"
    if not (kb / "manifest.json").exists():
        deid = [sys.executable, "-m", "deid_ds"]
        subprocess.run(
            [*deid, "synth", "--notes", str(notes), "--patients", str(notes // 4), "--seed", str(seed)]
            + ["--geography", "france", "--out", str(out), "--overwrite", "-q"],
            check=True,
            cwd=REPO,
        )
        subprocess.run(
            [*deid, "build-kb", "--sources", str(out / "kb"), "--out", str(kb), "-q", "--no-matcher"],
            check=True,
            cwd=REPO,
        )
    pools = load_pools(str(kb))
    keyring = Keyring(b"benchmark-dp-places-key-0123456789")
    index = similar_places(Context(keyring, pools, "x", PatientMetadata())).index
    patients = dict(
        zip(*(pq.read_table(out / "notes.parquet", columns=["id_document", "id_patient"]).to_pydict().values()))
    )
    gold = pq.read_table(out / "gold.parquet", columns=["id_document", "label", "text"]).to_pylist()
    mentions = {(patients[g["id_document"]], fold_key(g["text"])) for g in gold if g["label"] == "VILLE"}
    cities = pq.read_table(out / "notes.parquet", columns=["id_patient", "city"]).to_pylist()
    mentions |= {(c["id_patient"], fold_key(c["city"])) for c in cities if c["city"]}
    known = sorted((p, c) for p, c in mentions if index.find(c) is not None)
    print(f"\n## Generated corpus: {notes} notes, seed {seed}, {len(index)} communes in its knowledge base")
    print(f"{len(mentions):,} (patient, commune) pairs, {len(known):,} of communes the knowledge base knows\n")
    print(HEADER.replace(" |\n", " | outside the mechanism |\n") + "---:|")
    for label, privacy in [("shift (today)", Privacy())] + [
        (f"dp {h} ε={e:g} k={k}", Privacy("dp", e, k, h)) for h in hoods for k in ks for e in epsilons
    ]:
        ratios, km, outside = [], [], 0
        for patient, city in known:
            ctx = Context(keyring, pools, f"patient:{patient}", PatientMetadata(), privacy=privacy)
            j = index.find(fold_key(commune_for(ctx, city).name))
            outside += any(kind != "commune" for kind, _ in ctx.memory.get("dp_spent", {}))
            i = index.find(city)
            if j is None:
                continue
            ratios.append((index.size[j] + 1) / (index.size[i] + 1))
            km.append(float(haversine_km(index.lat[i], index.lon[i], index.lat[j], index.lon[j])))
        print(f"| {label} " + summary(ratios, km) + (f" {outside / len(known):.1%} |" if privacy.is_dp else " – |"))


def national(n: int, epsilons: list[float], ks: list[int], hoods: list[str], seed: int) -> None:
    rng = np.random.default_rng(seed)
    lat, lon = rng.uniform(42.5, 51.0, n), rng.uniform(-4.5, 8.0, n)
    size = np.round(np.exp(rng.normal(6.0, 1.6, n)))
    codes = [f"{i:05d}" for i in range(n)]
    started = time.perf_counter()
    index = build_index(codes, codes, [()] * n, lat.tolist(), lon.tolist(), size.tolist(), codes)
    built = time.perf_counter() - started
    originals = rng.choice(n, size=5000, p=size / size.sum())
    print(f"\n## National-size table: {n:,} communes (random positions, log-normal sizes), 5,000 originals by size\n")
    started = time.perf_counter()
    for i in originals[:1000]:
        nearest(index, int(i), 10)
    per_query = (time.perf_counter() - started) / 1000
    print(f"index built in {built:.2f} s; k = 10 nearest of one commune: {per_query * 1000:.2f} ms (memoised after)\n")
    print(HEADER)
    uniform = rng.integers(0, n, size=len(originals))
    print(
        "| uniform (today) "
        + summary(
            ((size[uniform] + 1) / (size[originals] + 1)).tolist(),
            haversine_km(lat[originals], lon[originals], lat[uniform], lon[uniform]).tolist(),
        )
    )
    for hood in hoods:
        for k in ks:
            for e in epsilons:
                picks = []
                for i in originals:
                    rows, probs = distribution(index, int(i), e, k, hood)
                    picks.append(rows[pick(probs, rng.random())])
                picks = np.asarray(picks)
                ratios = ((size[picks] + 1) / (size[originals] + 1)).tolist()
                km = haversine_km(lat[originals], lon[originals], lat[picks], lon[picks]).tolist()
                print(f"| dp {hood} ε={e:g} k={k} " + summary(ratios, km))
    print(
        "\n| neighbourhood | k | possible originals: min | p10 | median | max | communes never drawn "
        f"| communes with one | draws landing on one (ε={epsilons[0]:g}, all communes) | time |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for hood in hoods:
        for k in ks:
            started = time.perf_counter()
            counts = reverse_neighbours(index, k, hood)
            drawn = counts[counts > 0]
            alone = 0.0  # the chance that a commune's surrogate is the candidate of that commune alone
            for i in range(n):
                rows, probs = distribution(index, i, epsilons[0], k, hood)
                alone += float(probs[counts[list(rows)] == 1].sum())
            print(
                f"| {hood} | {k} | {drawn.min()} | {np.percentile(drawn, 10):.0f} | {np.median(drawn):.0f} | "
                f"{drawn.max()} | {np.mean(counts == 0):.1%} | {int((counts == 1).sum())} | {alone / n:.3%} | "
                f"{time.perf_counter() - started:.0f} s |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/deid-dp-places"))
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--epsilons", default="1,5,20")
    parser.add_argument("--ks", default="5,10,25")
    parser.add_argument("--national", type=int, default=35_000)
    parser.add_argument("--neighbourhoods", default="nearest,groups")
    args = parser.parse_args()
    epsilons = [float(e) for e in args.epsilons.split(",")]
    ks = [int(k) for k in args.ks.split(",")]
    hoods = args.neighbourhoods.split(",")
    print(f"machine: {cpu_model()} ({os.cpu_count()} CPUs), Python {platform.python_version()}")
    corpus(args.workdir, args.notes, args.seed, epsilons, ks, hoods)
    if args.national:
        national(args.national, epsilons, ks, hoods, args.seed)


if __name__ == "__main__":
    main()
