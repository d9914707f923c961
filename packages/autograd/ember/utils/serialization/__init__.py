"""Reading files of other frameworks: ``load_lua`` for Lua Torch 7's
binary serialization (``torch.save`` of Lua Torch, ``.t7`` files)."""
from ._lua import LuaFunction, LuaList, LuaObject, LuaTable, load_lua

__all__ = ["load_lua", "LuaObject", "LuaFunction", "LuaTable", "LuaList"]
