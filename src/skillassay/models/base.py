"""The base of every persisted model.

Unknown fields survive a load/save round trip (extra="allow"). Files are written with
`exclude_unset`: a field is written when the file had it or the code set it, so a file we
load and save keeps exactly its own keys and values, and code that builds a model for
writing passes every field it wants on disk (defaults are for reading). A Python-level
serializer hook would do this more implicitly but costs ~25x the serialisation time, on the
hot path of every trial."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class SpecModel(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_json_dict(self) -> dict[str, Any]:
        """What write_json puts on disk, as plain data."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
