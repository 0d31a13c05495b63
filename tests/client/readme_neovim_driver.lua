-- Loads the README's Neovim snippet as a user's init.lua would, then uses it:
-- a conversation is appended, the statusline meter fills, :BatonCompact compacts.
-- Run: nvim --headless --clean -l readme_neovim_driver.lua  (env: BATON_INIT, BATON_RESULT,
-- BATON_WORKSPACE)
local TIMEOUT = 20000
local result = {}
local function finish(ok, why)
  result.ok = ok
  result.error = why
  local file = assert(io.open(os.getenv("BATON_RESULT"), "w"))
  file:write(vim.json.encode(result))
  file:close()
  os.exit(ok and 0 or 1)
end

local notes = {}
vim.notify = function(msg)
  table.insert(notes, msg)
end

dofile(os.getenv("BATON_INIT"))
local workspace = os.getenv("BATON_WORKSPACE")
vim.fn.writefile({ "x = 1" }, workspace .. "/main.py")
vim.cmd.edit(vim.fn.fnameescape(workspace .. "/main.py"))

local client
if not vim.wait(TIMEOUT, function()
  client = vim.lsp.get_clients({ name = "baton" })[1]
  return client ~= nil and client.initialized
end) then
  finish(false, "the baton client never started")
end

local created = client:request_sync("baton/session/create", { title = "readme" }, TIMEOUT).result
local messages = {}
local filler = string.rep("the parser reads every row of the export and sums it by category ", 160)
for n = 1, 16 do
  table.insert(messages, { role = "user", content = "step " .. n .. ": " .. filler })
  table.insert(messages, { role = "assistant", content = "done with step " .. n })
end
local appended = client:request_sync(
  "baton/session/append",
  { sessionId = created.sessionId, messages = messages },
  TIMEOUT
)
if not appended or appended.err then
  finish(false, "append failed: " .. vim.inspect(appended))
end
if not vim.wait(TIMEOUT, function()
  return vim.g.baton_meter ~= nil
end) then
  finish(false, "no baton/usageChanged reached the handler")
end
result.meter = vim.g.baton_meter

vim.cmd("BatonCompact")
if not vim.wait(TIMEOUT, function()
  return #notes > 0
end) then
  finish(false, ":BatonCompact reported nothing")
end
result.notice = notes[1]
finish(true, nil)
