"""Edits that fixes are made of: removing an argument cleanly, replacing an expression."""

from __future__ import annotations

import ast
import io
import tokenize

from pallas_ls.core.model import Edit, Span
from pallas_ls.core.resolve import ModuleInfo


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    """Tokens of a fragment that sits inside brackets (wrapped so newlines are NL)."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO("(" + text + ")").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    return [t for t in toks if t.type not in {tokenize.ENDMARKER, tokenize.NEWLINE}]


def warm_up() -> None:
    """Pay a first fix's one-time cost ahead: tokenize compiles its regular expressions
    the first time it runs (~2 ms). The server calls this on its analysis thread at start."""
    _tokens("x, y=1")


def _pos_in(fragment_start: tuple[int, int], tok_pos: tuple[int, int]) -> tuple[int, int]:
    """Map a token position in '(' + fragment + ')' back to the file (0-based)."""
    row, col = tok_pos
    if row == 1:
        return fragment_start[0], fragment_start[1] + col - 1
    return fragment_start[0] + row - 1, col


def _line_text(module: ModuleInfo, line: int) -> str:
    return module.lines[line].rstrip("\r\n") if line < len(module.lines) else ""


def _offset_text(module: ModuleInfo, start: tuple[int, int], end: tuple[int, int]) -> str:
    if start[0] == end[0]:
        return _line_text(module, start[0])[start[1] : end[1]]
    parts = [module.lines[start[0]][start[1] :]]
    parts.extend(module.lines[start[0] + 1 : end[0]])
    parts.append(_line_text(module, end[0])[: end[1]])
    return "".join(parts).replace("\r\n", "\n").replace("\r", "\n")


def remove_argument(module: ModuleInfo, call: ast.Call, arg: ast.keyword | ast.expr) -> Edit | None:
    """Remove one argument of `call`, keeping commas, other lines and comments valid."""
    ordered: list[ast.keyword | ast.expr] = sorted(
        [*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset)
    )
    if arg not in ordered:
        return None
    index = ordered.index(arg)
    arg_span = module.span(arg)
    value = arg.value if isinstance(arg, ast.keyword) else arg
    arg_end = (module.span(value).end_line, module.span(value).end_col)
    arg_start = (arg_span.start_line, arg_span.start_col)
    call_end = module.span(call)
    close = (call_end.end_line, call_end.end_col - 1)  # the closing parenthesis

    # What follows the argument, up to the closing parenthesis.
    after = _offset_text(module, arg_end, close)
    toks = _tokens(after)
    comma_end: tuple[int, int] | None = None
    next_start: tuple[int, int] | None = None
    for tok in toks[1:-1]:
        if tok.type in {tokenize.NL, tokenize.COMMENT}:
            continue
        if tok.string == "," and comma_end is None:
            comma_end = _pos_in(arg_end, tok.end)
            continue
        next_start = _pos_in(arg_end, tok.start)
        break

    line_before = _line_text(module, arg_start[0])[: arg_start[1]]
    own_line_start = line_before.strip() == ""
    rest_after = _offset_text(
        module, comma_end or arg_end, (arg_end[0], len(_line_text(module, arg_end[0])))
    )
    own_line_end = rest_after.strip() == "" or rest_after.strip().startswith("#")
    if own_line_start and own_line_end and (next_start is None or next_start[0] > arg_end[0]):
        comment = rest_after.strip()
        if comment.startswith("#"):
            indent = line_before
            return Edit(
                Span(arg_start[0], 0, arg_end[0], len(_line_text(module, arg_end[0]))),
                indent + comment,
            )
        return Edit(Span(arg_start[0], 0, arg_end[0] + 1, 0), "")
    if next_start is not None and comma_end is not None:
        if next_start[0] == comma_end[0]:
            return Edit(Span(arg_start[0], arg_start[1], next_start[0], next_start[1]), "")
        return _remove_with_previous_comma(module, ordered, index, arg_start, arg_end, comma_end)
    if index > 0:
        # The last argument: drop the comma before it (a trailing comma after it stays).
        return _remove_with_previous_comma(module, ordered, index, arg_start, arg_end, None)
    end = comma_end or arg_end
    return Edit(Span(arg_start[0], arg_start[1], end[0], end[1]), "")


def _remove_with_previous_comma(
    module: ModuleInfo,
    ordered: list[ast.keyword | ast.expr],
    index: int,
    arg_start: tuple[int, int],
    arg_end: tuple[int, int],
    comma_end: tuple[int, int] | None,
) -> Edit | None:
    if index == 0:
        end = comma_end or arg_end
        return Edit(Span(arg_start[0], arg_start[1], end[0], end[1]), "")
    prev = ordered[index - 1]
    prev_value = prev.value if isinstance(prev, ast.keyword) else prev
    prev_span = module.span(prev_value)
    prev_end = (prev_span.end_line, prev_span.end_col)
    between = _offset_text(module, prev_end, arg_start)
    toks = _tokens(between)[1:-1]
    for i, tok in enumerate(toks):
        if tok.string == ",":
            comma = _pos_in(prev_end, tok.start)
            if any(t.type == tokenize.COMMENT for t in toks[i + 1 :]):
                # A comment line between the comma and the argument stays, with the line
                # breaks around it (what closes the call may follow the argument).
                after_comma = (comma[0], comma[1] + 1)
                kept = _raw_text(module, after_comma, arg_start)
                return Edit(Span(comma[0], comma[1], arg_end[0], arg_end[1]), kept)
            return Edit(Span(comma[0], comma[1], arg_end[0], arg_end[1]), "")
    return None


def _raw_text(module: ModuleInfo, start: tuple[int, int], end: tuple[int, int]) -> str:
    """The file's text between two positions, line endings as they are."""
    if start[0] == end[0]:
        return module.lines[start[0]][start[1] : end[1]]
    return "".join(
        [
            module.lines[start[0]][start[1] :],
            *module.lines[start[0] + 1 : end[0]],
            module.lines[end[0]][: end[1]],
        ]
    )


def replace_node(module: ModuleInfo, node: ast.AST, new_text: str) -> Edit:
    return Edit(module.span(node), new_text)
