"""Writes the proof of the built-in catalog that the package ships (engine/catalog/builtin_proof.json):
the catalog compiled and proved now, with a digest of every file it depended on and the versions
it was proved with, so that a first `scorers check` of an unmodified install need not compile it
(see engine/catalog/verified.py).

Run it after changing the engine or the built-in catalog (scorers.yaml, prompts/, schemas/):
tests/test_shipped_proof.py fails while the proof is stale, and a stale proof is never used.

    python tools/prove_builtin_catalog.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile


def main() -> int:
    # A user cache of its own: nothing the developer's checks remembered is read, nothing is left behind.
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="prove-builtin-")
    from engine.catalog import proved_builtin_catalog, verified
    from engine.errors import ConfigError

    try:
        proof = proved_builtin_catalog()
    except ConfigError as exc:
        print(f"the built-in catalog does not check clean, so no proof is written: {exc}", file=sys.stderr)
        return 1
    verified.SHIPPED_PROOF.write_text(json.dumps(proof, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{verified.SHIPPED_PROOF}: {len(proof['scorers'])} scorers, proved with {', '.join(f'{name} {value}' for name, value in proof['environment'].items())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
