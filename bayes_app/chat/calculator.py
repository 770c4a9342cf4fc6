"""A safe calculator for the Ask agent: the expression is parsed to an AST and only
whitelisted nodes are evaluated (never `eval`), with limits against resource abuse."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

MAX_EXPRESSION_CHARS = 500
MAX_EXPONENT = 1_000
MAX_MAGNITUDE = 1e300

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "floor": math.floor,
    "ceil": math.ceil,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}


class CalculatorError(ValueError):
    """The expression is not allowed or cannot be computed; the message says why."""


def calculate(expression: str) -> int | float:
    """Evaluate an arithmetic expression: numbers, + - * / // % **, parentheses, the
    functions in `_FUNCTIONS` and the constants pi and e. `^` is read as a power."""
    text = (expression or "").strip().replace("^", "**").replace("×", "*").replace("÷", "/")
    if not text:
        raise CalculatorError("The expression is empty.")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise CalculatorError(f"The expression is longer than {MAX_EXPRESSION_CHARS} characters.")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculatorError(f"Not an arithmetic expression: {expression!r}.") from None
    try:
        value = _eval(tree.body)
    except ZeroDivisionError:
        raise CalculatorError("Division by zero.") from None
    except (OverflowError, ValueError, TypeError) as err:
        raise CalculatorError(f"Cannot compute: {err}.") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CalculatorError("The result is not a number.")
    if isinstance(value, float) and (math.isnan(value) or abs(value) > MAX_MAGNITUDE):
        raise CalculatorError("The result is out of range.")
    return value


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise CalculatorError(f"Exponents above {MAX_EXPONENT} are not allowed.")
        result = _BINARY[type(node.op)](left, right)
        if isinstance(result, int) and result.bit_length() > 4_000:
            raise CalculatorError("The result is too large.")
        return result
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
        and len(node.args) <= 8
    ):
        return _FUNCTIONS[node.func.id](*[_eval(a) for a in node.args])
    raise CalculatorError(f"Not allowed in a calculation: {ast.unparse(node)!r}.")
