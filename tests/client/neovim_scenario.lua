-- Drives Baton from Neovim's built-in LSP client, the way a Neovim user's config would.
--
-- Run: nvim --headless --clean -l neovim_scenario.lua
-- Environment:
--   BATON_RESULT     where to write the JSON result (required)
--   BATON_PYTHON     the Python that runs `-m baton serve` (stdio mode)
--   BATON_TCP        "HOST:PORT" of a running `baton serve --tcp` (instead of stdio)
--   BATON_TOKEN      that server's token (sent as initializationOptions.batonToken)
--   BATON_WORKSPACE  a directory to use as the workspace
--   BATON_SESSION_FILEFORMAT  open the session document as a buffer of this 'fileformat'
-- Exits 0 when every step worked, 1 otherwise; the JSON says which step failed and why.

local TIMEOUT = 20000
local result = { steps = {}, ok = false }
local result_path = assert(os.getenv("BATON_RESULT"), "BATON_RESULT is required")

local function write_result()
  local file = assert(io.open(result_path, "w"))
  file:write(vim.json.encode(result))
  file:close()
end

local function fail(step, message)
  result.failed_step = step
  result.error = message
  write_result()
  os.exit(1)
end

local function check(step, condition, message)
  if not condition then
    fail(step, message)
  end
  table.insert(result.steps, step)
end

-- a request that must succeed; returns its result
local function request(client, step, method, params)
  local response, err = client:request_sync(method, params, TIMEOUT, 0)
  if not response then
    fail(step, "no response to " .. method .. ": " .. tostring(err))
  end
  if response.err then
    fail(step, method .. " failed: " .. vim.inspect(response.err))
  end
  return response.result
end

-- ---- start the server and attach it to a file buffer -----------------------------------

local workspace = assert(os.getenv("BATON_WORKSPACE"), "BATON_WORKSPACE is required")
local file_path = workspace .. "/scratch.py"
vim.fn.writefile({ "answer = 42" }, file_path)
vim.cmd.edit(vim.fn.fnameescape(file_path))

local cmd
local init_options -- nil over stdio: nothing to show
local tcp = os.getenv("BATON_TCP")
if tcp and tcp ~= "" then
  local host, port = tcp:match("^(.+):(%d+)$")
  cmd = vim.lsp.rpc.connect(host, tonumber(port))
  init_options = { batonToken = assert(os.getenv("BATON_TOKEN"), "BATON_TOKEN is required") }
  result.transport = "tcp"
else
  cmd = { assert(os.getenv("BATON_PYTHON")), "-m", "baton", "serve" }
  result.transport = "stdio"
end

local published = {} -- uri -> the latest publishDiagnostics params
local client_id = vim.lsp.start({
  name = "baton",
  cmd = cmd,
  root_dir = workspace,
  init_options = init_options,
  handlers = {
    ["textDocument/publishDiagnostics"] = function(err, params, ctx)
      published[params.uri] = params
      return vim.lsp.handlers["textDocument/publishDiagnostics"](err, params, ctx)
    end,
  },
})
check("start", client_id ~= nil, "vim.lsp.start returned no client")
local client = vim.lsp.get_client_by_id(client_id)
check("initialize", vim.wait(TIMEOUT, function()
  return client.initialized
end), "the server did not finish initializing")
local commands = client.server_capabilities.executeCommandProvider.commands
check("capabilities", vim.tbl_contains(commands, "baton.compactUpTo"), "baton.compactUpTo is not offered")

-- ---- a conversation ---------------------------------------------------------------------

local session = request(client, "create", "baton/session/create", { title = "From Neovim" })
local sid = session.sessionId
local messages = {}
for n = 1, 4 do
  local filler = string.rep("detail " .. n .. " ", 40)
  table.insert(messages, { role = "user", content = "Question " .. n .. ": " .. filler })
  table.insert(messages, {
    role = "assistant",
    content = { { type = "text", text = "Answer " .. n .. ": " .. filler } },
  })
end
local appended = request(client, "append", "baton/session/append", { sessionId = sid, messages = messages })
check("append", #appended.messageIds == 8, "expected 8 message ids")
result.used_tokens = appended.usage.usedTokens

-- ---- diagnostics on the session document ----------------------------------------------

local uri = session.uri
local rendered = request(client, "render", "baton/session/render", { sessionId = sid })
check("wait-diagnostics", vim.wait(TIMEOUT, function()
  local params = published[uri]
  return params ~= nil and params.version == rendered.version
end), "no diagnostics for " .. uri)
local usage_diagnostic
for _, diagnostic in ipairs(published[uri].diagnostics) do
  if diagnostic.code == "context-usage" then
    usage_diagnostic = diagnostic
  end
end
check("context-usage", usage_diagnostic ~= nil, "no context-usage diagnostic")
result.usage_message = usage_diagnostic.message
result.usage_line = usage_diagnostic.range.start.line
result.usage_severity = usage_diagnostic.severity

-- ---- the session document opened as a buffer (BATON_SESSION_FILEFORMAT) ----------------

local fileformat = os.getenv("BATON_SESSION_FILEFORMAT")
if fileformat and fileformat ~= "" then
  -- Neovim sends the buffer's text with the line ends of its 'fileformat' (dos: CRLF)
  local buf = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(buf, uri)
  vim.bo[buf].fileformat = fileformat
  local lines = vim.split(rendered.text, "\n", { plain = true })
  table.remove(lines) -- the text ends with a line end: 'eol' puts it back
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  check("open-document", vim.lsp.buf_attach_client(buf, client_id), "the buffer was not attached")
  result.session_fileformat = vim.bo[buf].fileformat
end

-- ---- "Compact up to here" on the fourth message ---------------------------------------

local target = rendered.messages[4]
local actions = request(client, "code-actions", "textDocument/codeAction", {
  textDocument = { uri = uri },
  range = { start = target.range.start, ["end"] = target.range.start },
  context = { diagnostics = {} },
})
result.action_titles = {}
local up_to
for _, action in ipairs(actions) do
  table.insert(result.action_titles, action.title)
  if action.title == "Compact up to here" then
    up_to = action
  end
end
check("find-action", up_to ~= nil and up_to.command ~= nil, "no 'Compact up to here' action")
local compacted = request(client, "execute", "workspace/executeCommand", up_to.command)
result.summarized = compacted.summarizedMessageIds
result.pivot = target.messageId

local view = request(client, "get", "baton/session/get", { sessionId = sid })
result.first_kind = view.messages[1].kind
result.kept_first_id = nil
for _, message in ipairs(view.messages) do
  if message.kind == "message" then
    result.kept_first_id = message.id
    break
  end
end
result.expected_kept_first_id = appended.messageIds[5]
check("summary-first", result.first_kind == "summary", "the view does not start with the summary")

-- ---- shut down ------------------------------------------------------------------------

client:stop()
vim.wait(TIMEOUT, function()
  return client:is_stopped()
end)
result.ok = true
write_result()
os.exit(0)
