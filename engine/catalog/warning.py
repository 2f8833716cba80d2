"""What a catalog warning is: what loads and runs but may not be meant, placed at the text to
change. `scorers check` prints it as a warning, ending with its code, and an author who means
it silences it at its line with a comment `# scorers: ignore[code]` (`{# scorers:
ignore[code] #}` in a template). Apart from the checks that find warnings, so that a
remembered check reads them back without loading those."""

from __future__ import annotations

from ..errors import ConfigError


class CatalogWarning(ConfigError):
    """A warning of the catalog's checks, with the `code` that silences it."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None, column: int | None = None, *, code: str) -> None:
        self.code = code
        super().__init__(message, path, line, column)
