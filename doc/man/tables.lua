-- pandoc filter for the man pages: every table becomes a definition list. The Markdown sources keep their tables
-- (readable where Markdown is rendered); in a man page a table of four columns wraps each cell into a narrow column
-- of one or two words a line, where a tagged paragraph per row (the first column as the tag, the other columns as
-- "header: value" and the last one as the text) reads as knot.conf(5) and nsd.conf(5) do.
local function inlines(blocks)
  return pandoc.utils.blocks_to_inlines(blocks)
end

function Table(tbl)
  local headers = {}
  if #tbl.head.rows > 0 then
    for i, cell in ipairs(tbl.head.rows[1].cells) do
      headers[i] = pandoc.utils.stringify(cell.contents)
    end
  end
  local items = {}
  for _, body in ipairs(tbl.bodies) do
    for _, row in ipairs(body.body) do
      local cells = row.cells
      local term = {pandoc.Strong(inlines(cells[1].contents))}
      local facts = pandoc.List()
      for i = 2, #cells - 1 do
        local value = inlines(cells[i].contents)
        if #value > 0 then
          if #facts > 0 then facts:insert(pandoc.Str(';')); facts:insert(pandoc.Space()) end
          if headers[i] and headers[i] ~= '' then
            facts:insert(pandoc.Emph({pandoc.Str(headers[i] .. ':')}))
            facts:insert(pandoc.Space())
          end
          facts:extend(value)
        end
      end
      local def = pandoc.List()
      if #facts > 0 then def:insert(pandoc.Para(facts)) end
      if #cells > 1 then def:insert(pandoc.Para(inlines(cells[#cells].contents))) end
      table.insert(items, {term, {def}})
    end
  end
  return pandoc.DefinitionList(items)
end
