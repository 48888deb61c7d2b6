-- pallas-ls for Neovim 0.7 to 0.10, which have no vim.lsp.config (Debian 12 ships 0.7.2).
-- `:luafile /path/to/editors/nvim/pallas_ls_legacy.lua` from init.vim / init.lua.
-- Needs `pallas-ls` on PATH (pip install /path/to/pallas-ls).
local cmd = { 'pallas-ls', 'serve' }
local root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', '.git' }

-- the nearest ancestor directory holding one of root_markers, else the file's directory
local function find_root(path)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  while true do
    for _, marker in ipairs(root_markers) do
      if vim.loop.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      return vim.fn.fnamemodify(path, ':p:h')
    end
    dir = parent
  end
end

local client_for_root = {}

local function attach(bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr)
  if path == '' or vim.api.nvim_buf_get_option(bufnr, 'buftype') ~= '' then
    return
  end
  local root = find_root(path)
  local config = { name = 'pallas_ls', cmd = cmd, root_dir = root, settings = {} }
  if vim.lsp.start then -- 0.8+: reuses a running client with the same name and root
    vim.lsp.start(config, { bufnr = bufnr })
    return
  end
  local id = client_for_root[root]
  if not (id and vim.lsp.get_client_by_id(id)) then
    id = vim.lsp.start_client(config)
    client_for_root[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

vim.api.nvim_create_autocmd('FileType', {
  group = vim.api.nvim_create_augroup('pallas_ls', { clear = true }),
  pattern = 'python',
  callback = function(args)
    attach(args.buf)
  end,
})
