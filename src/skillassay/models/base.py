"""The base of every persisted model.

Unknown fields survive a load/save round trip (extra="allow"). Optional fields that were
never given are not written as null. With `context={"roundtrip": True}` every field the file
did not have is left out, so a file we load and save keeps exactly its own keys and values."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, SerializationInfo, model_serializer


class SpecModel(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any, info: SerializationInfo) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            roundtrip = bool(info.context and info.context.get("roundtrip"))
            fields_set = self.model_fields_set
            for name, field in type(self).model_fields.items():
                key = field.alias or name
                if key in data and name not in fields_set and (roundtrip or data[key] is None):
                    del data[key]
        return data
