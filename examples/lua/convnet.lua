-- The small CNN of examples/c/convnet.c, from LuaJIT through its FFI: libTH
-- and libTHNN's own headers are read at run time (their preprocessor lines
-- dropped, numeric #defines substituted), the libraries loaded with ffi.load.
--
--   python examples/c/convnet_data.py convnet.bin
--   TH_INCLUDE=... TH_LIB_DIR=... THNN_INCLUDE=... THNN_LIB_DIR=... \
--       luajit examples/lua/convnet.lua convnet.bin
--
-- (the four folders: ember.th.get_include(), ember.th.get_lib_dir(),
-- ember.thnn.get_include(), ember.thnn.get_lib_dir(); without them it looks
-- in /usr/local, where `make install` puts the libraries).
-- Exit status: 0 when the output matches ember's, 1 when not, 2 on an error.
local ffi = require("ffi")

local TOLERANCE = 1e-4

local function die(msg)
  io.stderr:write("convnet.lua: ", msg, "\n")
  os.exit(2)
end

local function read_all(path)
  local f, err = io.open(path, "rb")
  if not f then die("cannot open " .. tostring(err)) end
  local s = f:read("*a")
  f:close()
  return s
end

-- A C header as ffi.cdef reads it: integer #defines substituted into the
-- text, every other preprocessor line and the C++ guards dropped.
local function declarations(text, defines)
  local out, in_cplusplus = {}, false
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    local s = line:match("^%s*(.-)%s*$")
    if s:find("^#ifdef __cplusplus") then
      in_cplusplus = true
    elseif in_cplusplus then
      in_cplusplus = not s:find("^#endif")
    elseif s:sub(1, 1) == "#" then
      local name, value = s:match("^#%s*define%s+([%w_]+)%s+(%-?%d+)$")
      if name then defines[name] = value end
    else
      out[#out + 1] = line
    end
  end
  local body = table.concat(out, "\n")
  return (body:gsub("[%a_][%w_]*", function(word) return defines[word] end))
end

local function env(name, default)
  local v = os.getenv(name)
  return (v and v ~= "") and v or default
end

local th_inc = env("TH_INCLUDE", "/usr/local/include")
local th_lib_dir = env("TH_LIB_DIR", "/usr/local/lib")
local thnn_inc = env("THNN_INCLUDE", th_inc)
local thnn_lib_dir = env("THNN_LIB_DIR", th_lib_dir)

local defines = {}
ffi.cdef(declarations(read_all(th_inc .. "/th.h"), defines))
ffi.cdef(declarations(read_all(thnn_inc .. "/thnn.h"), defines))
-- libTH first and global: libTHNN resolves its libTH symbols from it
local TH = ffi.load(th_lib_dir .. "/libTH.so", true)
local THNN = ffi.load(thnn_lib_dir .. "/libTHNN.so")

if TH.th_abi_version_major() ~= 1 or THNN.thnn_abi_version_major() ~= 1 then
  die("this program was written for libTH and libTHNN ABI 1.x")
end

local function th_check(t, what)
  if t == nil then die(what .. ": " .. ffi.string(TH.th_last_error())) end
  return ffi.gc(t, TH.th_tensor_release)
end

local function thnn_check(rc, what)
  if rc ~= 0 then die(what .. ": " .. ffi.string(THNN.thnn_last_error())) end
end

local function empty(sizes, dtype)
  local n = #sizes
  local s = ffi.new("int64_t[?]", n, sizes)
  return th_check(TH.th_empty(n, s, dtype or TH.TH_FLOAT32), "empty")
end

-- The tensor file written by convnet_data.py (format in its docstring).
local function read_tensors(path)
  local data = read_all(path)
  local buf = ffi.cast("const uint8_t *", data)
  local pos = 0
  local function need(n, what)
    if pos + n > #data then die("truncated file: " .. what) end
  end
  local function u32(what)
    need(4, what)
    local v = ffi.cast("const uint32_t *", buf + pos)[0]
    pos = pos + 4
    return tonumber(v)
  end
  need(8, "magic")
  if data:sub(1, 8) ~= "EMBRTNS1" then die("not a tensor file (bad magic): " .. path) end
  pos = 8
  local tensors = {}
  for _ = 1, u32("count") do
    local len = u32("name length")
    need(len, "name")
    local name = data:sub(pos + 1, pos + len)
    pos = pos + len
    if u32(name) ~= TH.TH_FLOAT32 then die("only float32 records are supported: " .. name) end
    local ndim = u32(name)
    if ndim > 16 then die("too many dimensions: " .. name) end
    need(8 * ndim, name)
    local sizes = {}
    for d = 0, ndim - 1 do
      sizes[d + 1] = tonumber(ffi.cast("const int64_t *", buf + pos)[d])
    end
    pos = pos + 8 * ndim
    local t = empty(sizes)
    local nbytes = tonumber(TH.th_numel(t)) * 4
    need(nbytes, name)
    ffi.copy(TH.th_data_ptr(t), buf + pos, nbytes)
    pos = pos + nbytes
    tensors[name] = t
  end
  return tensors
end

local ONE = ffi.new("int64_t[2]", 1, 1)
local TWO = ffi.new("int64_t[2]", 2, 2)
local ZERO = ffi.new("int64_t[2]", 0, 0)

local function conv_relu(x, w, b)
  local oh = THNN.thnn_window_output_size(x.sizes[2], w.sizes[2], 1, 0, 1, 0)
  local ow = THNN.thnn_window_output_size(x.sizes[3], w.sizes[3], 1, 0, 1, 0)
  if oh < 1 or ow < 1 then die("conv2d: " .. ffi.string(THNN.thnn_last_error())) end
  local y = empty({x.sizes[0], w.sizes[0], oh, ow})
  thnn_check(THNN.thnn_conv2d_forward(y, x, w, b, ONE, ZERO, ONE, 1), "conv2d")
  thnn_check(THNN.thnn_activation_forward(y, y, THNN.THNN_RELU, 0, 0), "relu")
  return y
end

local function max_pool2(x)
  local sizes = {x.sizes[0], x.sizes[1],
                 THNN.thnn_window_output_size(x.sizes[2], 2, 2, 0, 1, 0),
                 THNN.thnn_window_output_size(x.sizes[3], 2, 2, 0, 1, 0)}
  local y, indices = empty(sizes), empty(sizes, TH.TH_INT64)
  thnn_check(THNN.thnn_max_pool2d_forward(y, indices, x, TWO, TWO, ZERO, ONE, 0), "max_pool2d")
  return y
end

local function linear_log_softmax(x, w, b)
  local n = x.sizes[0]
  local flat = ffi.new("int64_t[2]", n, TH.th_numel(x) / n)
  local x2 = th_check(TH.th_reshape(x, 2, flat), "flatten")
  local wt = th_check(TH.th_transpose(w, 0, 1), "transpose")
  local z = th_check(TH.th_addmm(b, x2, wt, 1.0, 1.0), "linear")
  local y = empty({z.sizes[0], z.sizes[1]})
  thnn_check(THNN.thnn_log_softmax_forward(y, z, 1), "log_softmax")
  return y
end

local function forward(p, input)
  for _, k in ipairs({"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                      "fc.weight", "fc.bias"}) do
    if not p[k] then die("missing record: " .. k) end
  end
  local x = max_pool2(conv_relu(input, p["conv1.weight"], p["conv1.bias"]))
  x = max_pool2(conv_relu(x, p["conv2.weight"], p["conv2.bias"]))
  return linear_log_softmax(x, p["fc.weight"], p["fc.bias"])
end

local path = arg[1]
if not path or arg[2] then die("usage: luajit convnet.lua FILE   (written by convnet_data.py)") end
local p = read_tensors(path)
if not p.input or not p.expected then die("missing record: input or expected") end
local out = forward(p, p.input)
local exp = p.expected
if out.ndim ~= exp.ndim or out.sizes[0] ~= exp.sizes[0] or out.sizes[1] ~= exp.sizes[1] then
  die("output shape differs from the reference")
end
local worst = 0
local a, e = ffi.cast("float *", TH.th_data_ptr(out)), ffi.cast("float *", TH.th_data_ptr(exp))
for i = 0, tonumber(TH.th_numel(out)) - 1 do
  local d = math.abs(a[i] - e[i])
  if not (d <= worst) then worst = d end   -- a NaN counts as the worst
end
print(string.format("output %d x %d, max |LuaJIT - ember| = %.3g",
                    tonumber(out.sizes[0]), tonumber(out.sizes[1]), worst))
if worst <= TOLERANCE then
  print("OK: matches ember")
  os.exit(0)
end
print("MISMATCH")
os.exit(1)
