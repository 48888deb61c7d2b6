-- Headless Neovim end-to-end driver for pallas-ls (Neovim 0.7.2 and 0.11.x).
-- Started by tests/editors/test_nvim.py after the shipped config was loaded (-u / --cmd):
--   nvim --headless -i NONE -u <shipped config> -c 'luafile tests/editors/nvim_driver.lua'
-- Env: PALLAS_EXPECT (JSON written by the test), PALLAS_RESULT (PASS/FAIL lines go there).
-- Every check writes "PASS <id> ..." or "FAIL <id> ..."; the first FAIL ends the run.
local expect = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv('PALLAS_EXPECT')), '\n'))
local result_file = os.getenv('PALLAS_RESULT')
local out = {}
local function log(...)
  local line = table.concat(vim.tbl_map(tostring, { ... }), ' ')
  table.insert(out, (line:gsub('\n%s*', ' '))) -- one line per entry (writefile: \n -> NUL)
end
local function check(cond, id, detail)
  log((cond and 'PASS ' or 'FAIL ') .. id .. (detail and (' ' .. detail) or ''))
  if not cond then
    error('check failed: ' .. id .. (detail and (' ' .. detail) or ''), 0)
  end
end
local function wait(ms, pred)
  return vim.wait(ms, pred, 20)
end

local has_011 = vim.fn.has('nvim-0.11') == 1

-- The raw LSP diagnostics the server sent (push or pull), per URI: vim.diagnostic only
-- keeps byte columns, and the point is to check the server's columns in the negotiated
-- encoding.
local raw = {}
local function record(method, key)
  local orig = vim.lsp.handlers[method]
  vim.lsp.handlers[method] = function(err, result, ctx, config)
    if result then
      local uri, items = key(result, ctx)
      if uri and items then
        if not raw[uri] then
          log('diagnostics via ' .. method)
        end
        raw[uri] = items
      end
    end
    return orig(err, result, ctx, config)
  end
end
record('textDocument/publishDiagnostics', function(r)
  return r.uri, r.diagnostics
end)
if vim.lsp.handlers['textDocument/diagnostic'] then
  record('textDocument/diagnostic', function(r, ctx)
    return ctx.params and ctx.params.textDocument.uri, r.kind == 'full' and r.items or nil
  end)
end

local function pallas_clients(bufnr)
  local found = {}
  if vim.lsp.get_clients then
    found = vim.lsp.get_clients({ bufnr = bufnr, name = 'pallas_ls' })
  else
    for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
      if c.name == 'pallas_ls' then
        table.insert(found, c)
      end
    end
  end
  return found
end

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') .. '\n'
end

local function shown(bufnr)
  return vim.diagnostic.get(bufnr)
end

local function check_diagnostic(bufnr, uri, enc, tag)
  check(#shown(bufnr) == 1, tag .. '.count', 'shown=' .. #shown(bufnr))
  check(raw[uri] and #raw[uri] == 1, tag .. '.raw_count', 'raw=' .. (raw[uri] and #raw[uri] or -1))
  local d = shown(bufnr)[1]
  local r = raw[uri][1]
  check(vim.startswith(r.message, expect.message_prefix), tag .. '.message', vim.inspect(r.message))
  check(d.message == r.message, tag .. '.shown_message', vim.inspect(d.message))
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  check(r.code == expect.code and code == expect.code, tag .. '.code', tostring(r.code) .. ' ' .. tostring(code))
  local want = expect.range[enc]
  local got = { r.range.start.line, r.range.start.character, r.range['end'].line, r.range['end'].character }
  check(vim.deep_equal(got, want), tag .. '.range.lsp',
    ('%s got %s want %s'):format(enc, table.concat(got, ':'), table.concat(want, ':')))
  local bytes = expect.range['utf-8']
  local shown_range = { d.lnum, d.col, d.end_lnum or d.lnum, d.end_col }
  check(vim.deep_equal(shown_range, bytes), tag .. '.range.buffer',
    ('got %s want %s'):format(table.concat(shown_range, ':'), table.concat(bytes, ':')))
  local line = vim.api.nvim_buf_get_lines(bufnr, d.lnum, d.lnum + 1, false)[1]
  check(line:sub(d.col + 1, d.end_col) == expect.covered, tag .. '.covers', vim.inspect(line:sub(d.col + 1, d.end_col)))
  return d, r
end

local function run()
  local v = vim.version()
  log(('nvim %d.%d.%d mode=%s'):format(v.major, v.minor, v.patch, expect.mode))
  check(vim.fn.executable('pallas-ls') == 1, 'server.on_path', vim.fn.exepath('pallas-ls'))

  if has_011 and expect.mode ~= 'legacy' then
    -- the config Neovim resolved must be the shipped one, and both shipped files must agree
    local resolved = vim.lsp.config.pallas_ls
    local shipped = dofile(expect.repo .. '/editors/nvim/lsp/pallas_ls.lua')
    for _, key in ipairs({ 'cmd', 'filetypes', 'root_markers' }) do
      check(vim.deep_equal(resolved[key], shipped[key]), 'config.' .. key, vim.inspect(resolved[key]))
    end
  end

  vim.cmd('edit ' .. vim.fn.fnameescape(expect.file))
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(bufnr)
  check(vim.bo[bufnr].filetype == 'python', 'buffer.filetype', vim.bo[bufnr].filetype)

  check(wait(20000, function()
    return #pallas_clients(bufnr) == 1
  end), 'client.attached')
  local client = pallas_clients(bufnr)[1]
  check(vim.deep_equal(client.config.cmd, { 'pallas-ls', 'serve' }), 'client.cmd', vim.inspect(client.config.cmd))
  check(client.config.root_dir == expect.root, 'client.root_dir', tostring(client.config.root_dir))
  local enc = client.offset_encoding
  check(enc == expect.encoding, 'client.encoding', enc)

  if expect.ignored ~= nil and expect.ignored ~= vim.NIL then -- JSON null is vim.NIL
    -- settings: the server was told to ignore the code, so the file's report comes back empty
    local settings = client.config.settings and client.config.settings['pallas-ls'] or {}
    check(vim.deep_equal(settings.ignore, expect.ignored), 'settings.sent', vim.inspect(settings))
    check(wait(30000, function()
      return raw[uri] ~= nil
    end), 'settings.report_arrived')
    check(#raw[uri] == 0 and #shown(bufnr) == 0, 'settings.ignored', vim.inspect(raw[uri]))
    return
  end

  -- 1. the diagnostic: message, code, exact range
  check(wait(30000, function()
    return #shown(bufnr) > 0
  end), 'diag.arrived')
  local d = check_diagnostic(bufnr, uri, enc, 'diag')

  -- 2. hover on the diagnostic: the raw answer, then the floating window a user sees
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col + 2 })
  local pparams = has_011 and vim.lsp.util.make_position_params(0, enc) or vim.lsp.util.make_position_params()
  local hres = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', pparams, 10000)
  local hover = hres and hres[client.id] and hres[client.id].result
  check(hover ~= nil, 'hover.result', hover == nil and (hres and vim.inspect(hres[client.id]) or 'timeout') or nil)
  local htext = type(hover.contents) == 'table' and (hover.contents.value or vim.inspect(hover.contents))
    or tostring(hover.contents)
  check(htext:find(expect.hover, 1, true) ~= nil, 'hover.text', vim.inspect(htext:sub(1, 300)))
  local function float_text()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
        return table.concat(lines, ' ')
      end
    end
  end
  vim.lsp.buf.hover()
  check(wait(10000, function()
    return float_text() ~= nil
  end), 'hover.float_opened')
  check(float_text():find(expect.hover, 1, true) ~= nil, 'hover.float_text', vim.inspect(float_text():sub(1, 300)))
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      vim.api.nvim_win_close(win, true)
    end
  end

  -- 3. quick fix: exactly one quickfix for the finding, then applied the way a user does
  local rparams = has_011 and vim.lsp.util.make_range_params(0, enc) or vim.lsp.util.make_range_params()
  rparams.context = { diagnostics = raw[uri], only = { 'quickfix' } }
  local cres = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', rparams, 10000)
  local actions = cres and cres[client.id] and cres[client.id].result or {}
  local fixes = {}
  for _, a in ipairs(actions) do
    log('quickfix offered: ' .. tostring(a.title))
    if a.kind == 'quickfix' and a.title and a.title:find('opt_level', 1, true) then
      table.insert(fixes, a)
    end
  end
  check(#fixes == 1, 'action.count', ('%d of %d quickfixes mention opt_level'):format(#fixes, #actions))
  local title = fixes[1].title
  check(title:lower():find('remove', 1, true) ~= nil, 'action.title', vim.inspect(title))

  local offered = {}
  local orig_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice) -- the user picks the fix from the menu
    local chosen
    for _, item in ipairs(items) do
      local label = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(offered, label)
      if label == title then
        chosen = chosen or item
      end
    end
    on_choice(chosen)
  end
  local before = buffer_text(bufnr)
  vim.lsp.buf.code_action() -- at the cursor, diagnostics from the editor, as a user runs it
  wait(10000, function()
    return buffer_text(bufnr) ~= before
  end)
  vim.ui.select = orig_select
  log('code action menu: ' .. table.concat(offered, ' | '))
  check(buffer_text(bufnr) == expect.fixed_text, 'fix.text',
    vim.inspect(vim.api.nvim_buf_get_lines(bufnr, d.lnum, d.lnum + 1, false)[1]))

  -- 4. the edit reaches the server (didChange) and the diagnostic goes away
  check(wait(15000, function()
    return #shown(bufnr) == 0 and raw[uri] and #raw[uri] == 0
  end), 'diag.cleared', 'shown=' .. #shown(bufnr))

  -- 5. the user types the argument back: the diagnostic returns, at the same place
  local at = expect.retype['utf-8']
  vim.api.nvim_buf_set_text(bufnr, at[1], at[2], at[1], at[2], { expect.retype_text })
  check(buffer_text(bufnr) == expect.text, 'retype.text')
  check(wait(15000, function()
    return #shown(bufnr) > 0
  end), 'diag.back')
  check_diagnostic(bufnr, uri, enc, 'diag.back')

  vim.lsp.stop_client(client.id)
  wait(5000, function()
    return vim.lsp.get_client_by_id(client.id) == nil
  end)
end

local t0 = vim.loop.hrtime()
local ok, err = pcall(run)
log(('elapsed_in_nvim %.2fs'):format((vim.loop.hrtime() - t0) / 1e9))
log(ok and 'RESULT PASS' or ('RESULT FAIL: ' .. tostring(err)))
vim.fn.writefile(out, result_file)
io.stdout:write(table.concat(out, '\n') .. '\n')
vim.cmd(ok and 'qall!' or 'cquit! 1')
