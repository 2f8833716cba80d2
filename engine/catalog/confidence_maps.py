"""Where the map from a judge's confidence to the chance that people agree with it is kept:
beside the catalog that defines the scorer (the working folder for a built-in scorer), one
file per version of the scorer (its fingerprint: definition, templates, schemas, options and
judge), so a scorer that changed is never given the map of another version. `scorers
calibrate --fit-confidence` writes it (runs/confidence_map.py); `Catalog.create` gives it to
the scorer it makes, which then writes each item's calibrated confidence beside its own.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ConfigError
from ..scoring.confidence import ConfidenceMap


def maps_folder(catalog: Path | None) -> Path:
    """The folder of the maps of a catalog's scorers (`catalog`: its YAML file, or None for
    the built-in catalog alone, whose maps are kept in the working folder)."""
    return catalog.parent if catalog is not None else Path.cwd()


def map_file(folder: Path, scorer_id: str, fingerprint: str) -> Path:
    """Where the map of one version of a scorer is kept."""
    return folder / "confidence_maps" / f"{scorer_id}@{fingerprint}.json"


def read_map(folder: Path, scorer_id: str, fingerprint: str) -> ConfidenceMap | None:
    """The map kept for this version of the scorer, if any; a file that is not one is an error
    naming it, never a silent uncalibrated run."""
    path = map_file(folder, scorer_id, fingerprint)
    if not path.is_file():
        return None
    try:
        return ConfidenceMap.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, OSError) as broken:
        raise ConfigError(f"the confidence map {path} cannot be read ({type(broken).__name__}): fit it again with `scorers calibrate --fit-confidence`") from None
