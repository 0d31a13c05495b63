-- Loads the README's Neovim snippet, opens utils.py and sends a prompt: the (fake) model
-- edits the file, the snippet's handler answers baton/tool/permission (its confirm()
-- stubbed to "Allow once") and Neovim applies the workspace/applyEdit to the buffer.
-- Run: nvim --headless --clean -l neovim_tools_driver.lua  (env: BATON_INIT, BATON_RESULT,
-- BATON_WORKSPACE, BATON_LINES: utils.py's lines as a JSON array)
local TIMEOUT = 60000
local result = { asked = {} }
local function finish(ok, why)
  result.ok = ok
  result.error = why
  local file = assert(io.open(os.getenv("BATON_RESULT"), "w"))
  file:write(vim.json.encode(result))
  file:close()
  os.exit(ok and 0 or 1)
end

vim.fn.confirm = function(msg, choices, default)
  table.insert(result.asked, msg)
  return 1 -- Allow once
end

dofile(os.getenv("BATON_INIT"))
local workspace = os.getenv("BATON_WORKSPACE")
local path = workspace .. "/utils.py"
vim.fn.writefile(vim.json.decode(os.getenv("BATON_LINES")), path)
vim.cmd.edit(vim.fn.fnameescape(path))

local client
if not vim.wait(TIMEOUT, function()
  client = vim.lsp.get_clients({ name = "baton" })[1]
  return client ~= nil and client.initialized
end) then
  finish(false, "the baton client never started")
end

local created = client:request_sync("baton/session/create", { title = "tools" }, TIMEOUT).result
local sent = client:request_sync(
  "baton/session/send",
  { sessionId = created.sessionId, content = "rename parse_date to parse_day in utils.py" },
  TIMEOUT
)
if not sent or sent.err or not sent.result then
  finish(false, "send failed: " .. vim.inspect(sent))
end
result.reply = sent.result.message.content[1].text
result.buffer = vim.api.nvim_buf_get_lines(0, 0, -1, false)
result.modified = vim.bo.modified
result.disk = vim.fn.readfile(path)
finish(true)
