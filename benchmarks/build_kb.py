"""Benchmark: build-kb on national-size files, and loading the compiled national matcher.

Targets, on a 2-core machine: the whole of France in under 10 minutes with peak memory under
3 GB; loading the compiled national matcher in under 5 seconds and under 1.5 GB resident.

    .venv/bin/python benchmarks/build_kb.py [--scale 1.0] [--workdir /tmp/deid-kb-bench] [--keep]

The real files cannot be downloaded here, so files of the same size and shape are generated in the
official formats: a BAN ``adresses-france.csv.gz`` of ~26 million address rows (~35,000 communes,
~2.3 million distinct streets, 23 columns, ``;``) and an Annuaire Santé extraction of ~1.9 million
activity lines (650,000 people, 52 columns, ``|`` with the trailing ``|``). ``--scale 0.1`` makes
everything ten times smaller for a quick run. Generation is not timed. The build runs in a child
process (``deid-ds build-kb``) so its peak memory is measured alone; so does the matcher load.
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import random
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BAN_HEADER = (
    "id;id_fantoir;numero;rep;nom_voie;code_postal;code_insee;nom_commune;code_insee_ancienne_commune;"
    "nom_ancienne_commune;x;y;lon;lat;type_position;alias;nom_ld;libelle_acheminement;nom_afnor;source_position;"
    "source_nom_voie;certification_commune;cad_parcelles"
)
SYLLABLES = (
    "ker lan pen plou tre gui mor bel ros val mont saint fon ber lou mar cha vil bou la ne ri co ta du pi "
    "ge an on el or"
).split()
STREET_TYPES = ["Rue", "Avenue", "Impasse", "Allée", "Chemin", "Route", "Place", "Boulevard", "Lieu-dit", "Résidence"]
FIRST = ["Jean", "Marie", "Pierre", "Anne", "Yann", "Sophie", "Louis", "Claire", "Paul", "Julie", "Hugo", "Léa"]


def word(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts)).capitalize()


def generate_ban(path: Path, rows: int, communes: int, streets: int, rng: random.Random) -> None:
    commune_names = [
        f"{word(rng, 2)}-{word(rng, 2)}" if i % 7 == 0 else word(rng, rng.randint(2, 3)) for i in range(communes)
    ]
    per_commune = max(1, streets // communes)
    numbers_per_street = max(1, rows // (communes * per_commune))
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        out.write(BAN_HEADER + "\n")
        written = 0
        for c, commune in enumerate(commune_names):
            insee = f"{(c % 95) + 1:02d}{c % 1000:03d}"
            postcode = f"{(c % 95) + 1:02d}{rng.randint(0, 999):03d}"
            label = commune.upper().replace("-", " ")
            for s in range(per_commune):
                street = f"{rng.choice(STREET_TYPES)} {word(rng, rng.randint(2, 4))} {word(rng, 2)}"
                lines = []
                for number in range(1, numbers_per_street + 1):
                    lines.append(
                        f"{insee}_{s:04d}_{number:05d};;{number};;{street};{postcode};{insee};{commune};;;"
                        f"100000.00;6800000.00;-2.5;48.1;entrée;;;{label};{street.upper()};commune;commune;1;"
                    )
                out.write("\n".join(lines) + "\n")
                written += len(lines)
                if written >= rows:
                    return


def generate_directory(path: Path, lines: int, people: int, rng: random.Random) -> None:
    header = (REPO / "tests" / "data" / "formats" / "rpps_small.txt").read_text(encoding="utf-8").splitlines()[0]
    surnames = [word(rng, rng.randint(2, 4)).upper() for _ in range(250_000)]
    professions = [
        "Médecin",
        "Infirmier",
        "Masseur-Kinésithérapeute",
        "Pharmacien",
        "Sage-Femme",
        "Chirurgien-Dentiste",
    ]
    with path.open("w", encoding="utf-8") as out:
        out.write(header + "\n")
        written = 0
        for person in range(people):
            last, first = rng.choice(surnames), rng.choice(FIRST)
            profession = rng.choice(professions)
            activities = (lines * (person + 1)) // people - (lines * person) // people  # one line per activity
            for a in range(activities):
                fields = [""] * 52
                fields[0:11] = [
                    "8",
                    f"1{person:010d}",
                    f"81{person:010d}",
                    "DR",
                    "Docteur",
                    "M",
                    "Monsieur",
                    last,
                    first,
                    "10",
                    profession,
                ]
                fields[30:38] = [
                    "",
                    "R",
                    "Rue",
                    f"{word(rng, 3).upper()}",
                    "",
                    "",
                    f"{(person % 95) + 1:02d}000",
                    f"{(person % 95) + 1:02d}{a:03d}",
                ]
                fields[40] = f"02{person % 100000000:08d}"
                out.write("|".join(fields) + "|\n")
                written += 1
                if written >= lines:
                    return


def generate_sources(work: Path, scale: float = 1.0) -> tuple[Path, Path]:
    """National-size (times ``scale``) BAN and Annuaire Santé files in ``work``, generated unless present."""
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1)
    ban = work / "adresses-france.csv.gz"
    directory = work / "PS_LibreAcces_Personne_activite_202401010000.txt"
    if not ban.exists():
        print("generating BAN…", flush=True)
        generate_ban(ban, int(26_000_000 * scale), int(35_000 * scale) or 1, int(2_300_000 * scale), rng)
    if not directory.exists():
        print("generating Annuaire Santé…", flush=True)
        generate_directory(directory, int(1_900_000 * scale), int(650_000 * scale), rng)
    return ban, directory


# The measured Python code reports its own peak (RUSAGE_SELF) at exit: RUSAGE_CHILDREN is not reliable
# here, Linux carries the children's high-water mark over fork into later children.
_REPORT_PEAK = (
    "import atexit, resource, sys, time; _t = time.perf_counter();"
    "atexit.register(lambda: print('PEAK', time.perf_counter() - _t, "
    "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, file=sys.stderr));"
)


def peak_rss_mb_of(code: str, *args: str) -> tuple[float, float]:
    """Run Python ``code`` in a fresh interpreter; its wall time (s) and peak resident memory (MB)."""
    result = subprocess.run([sys.executable, "-c", _REPORT_PEAK + code, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{code} failed:\n{result.stdout}\n{result.stderr}")
    _, seconds, peak = result.stderr.strip().splitlines()[-1].split()
    return float(seconds), float(peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/deid-kb-bench"))
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args()
    work = args.workdir
    ban, directory = generate_sources(work, args.scale)
    out = work / "kb"
    shutil.rmtree(out, ignore_errors=True)
    build_code = (
        "import sys; from deid_ds.kb.build import build_kb; build_kb(sys.argv[3], ban=[sys.argv[1]], "
        "health_directory=[sys.argv[2]], progress=False)"
    )
    build_s, build_mb = peak_rss_mb_of(build_code, str(ban), str(directory), str(out))
    compile_code = "import sys; from deid_ds.kb.matcher import load_matcher; load_matcher(sys.argv[1])"
    compile_s, compile_mb = peak_rss_mb_of(compile_code, str(out))
    load_code = (
        "import sys, time, resource; t = time.perf_counter();"
        " from deid_ds.kb.matcher import load_matcher; m = load_matcher(sys.argv[1]);"
        "s = time.perf_counter() - t; m.find('Dr Jean KERPEN, 3 rue Kerlan à Plouvalros');"
        "print(s, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, len(m))"
    )
    result = subprocess.run([sys.executable, "-c", load_code, str(out)], capture_output=True, text=True, check=True)
    load_s, load_mb, keys = result.stdout.split()
    manifest = json.loads((out / "manifest.json").read_text())
    rows = {t: info["rows"] for t, info in manifest["tables"].items()}
    sizes = {p.name: p.stat().st_size for p in (ban, directory, out / "matcher.npz")}
    print(
        json.dumps(
            {
                "scale": args.scale,
                "sizes": sizes,
                "rows_read": [s["rows_read"] for s in manifest["sources"]],
                "tables": rows,
                "build_s": round(build_s, 1),
                "build_peak_mb": round(build_mb),
                "compile_s": round(compile_s, 1),
                "compile_peak_mb": round(compile_mb),
                "load_s": round(float(load_s), 2),
                "load_rss_mb": round(float(load_mb)),
                "matcher_keys": int(keys),
                "machine": f"{platform.machine()}, Python {platform.python_version()}",
            },
            indent=1,
        )
    )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
