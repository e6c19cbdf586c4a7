"""GitHub Actions expressions (docs: "Evaluate expressions in workflows and actions").

Literals (null, booleans, numbers, 'strings' with '' for a quote), context access with `.name`
(names may contain '-') and `[index]`, function calls, and the operators ! < <= > >= == != && ||
with parentheses. The semantics follow the docs: && and || return one of their operands, ==
compares strings case-insensitively and coerces different types to numbers, a missing property
is null, and `${{ }}` in a string is replaced by the value's string form.
"""

import json
import math
import re

STATUS_FUNCTIONS = ("always", "success", "failure", "cancelled")


class ExpressionError(Exception):
    pass


# --- tokens -----------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<number>0x[0-9a-fA-F]+|-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
    | (?P<string>'(?:[^']|'')*')
    | (?P<op>&&|\|\||==|!=|<=|>=|[<>!()\[\].,*])
    | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
    )""",
    re.VERBOSE,
)


def tokenize(text):
    tokens = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ExpressionError(f"cannot read {text[pos:]!r} in {text!r}")
        pos = m.end()
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "number":
            value = float(int(value, 16)) if value.lower().startswith("0x") else float(value)
        elif kind == "string":
            value = value[1:-1].replace("''", "'")
        tokens.append((kind, value))
    tokens.append(("end", None))
    return tokens


# --- syntax tree: tuples ------------------------------------------------------------------------
# ("lit", value) ("ctx", name) ("prop", node, name) ("index", node, node) ("star", node)
# ("call", name, [args]) ("not", node) ("bin", op, left, right)


class _Parser:
    def __init__(self, text):
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    def peek(self, value=None):
        kind, v = self.tokens[self.i]
        if value is None:
            return kind, v
        return kind == "op" and v == value

    def take(self, value=None):
        tok = self.tokens[self.i]
        if value is not None and not (tok[0] == "op" and tok[1] == value):
            raise ExpressionError(f"expected {value!r} at token {self.i} of {self.text!r}")
        self.i += 1
        return tok

    def parse(self):
        node = self.or_()
        if self.peek()[0] != "end":
            raise ExpressionError(f"unexpected {self.peek()[1]!r} in {self.text!r}")
        return node

    def binary(self, ops, operand):
        """Left-associative `operand (op operand)*` for the operators `ops`."""
        node = operand()
        while any(self.peek(op) for op in ops):
            op = self.take()[1]
            node = ("bin", op, node, operand())
        return node

    def or_(self):
        return self.binary(("||",), self.and_)

    def and_(self):
        return self.binary(("&&",), self.eq)

    def eq(self):
        return self.binary(("==", "!="), self.cmp)

    def cmp(self):
        return self.binary(("<", "<=", ">", ">="), self.unary)

    def unary(self):
        if self.peek("!"):
            self.take()
            return ("not", self.unary())
        return self.postfix()

    def postfix(self):
        node = self.primary()
        while self.peek(".") or self.peek("["):
            opener = self.take()[1]
            if self.peek("*"):  # .* and [*]: the object filter
                self.take()
                node = ("star", node)
            elif opener == ".":
                kind, name = self.take()
                if kind != "name":
                    raise ExpressionError(f"expected a property name in {self.text!r}")
                node = ("prop", node, name)
            else:
                node = ("index", node, self.or_())
            if opener == "[":
                self.take("]")
        return node

    def primary(self):
        kind, value = self.take()
        if kind in ("number", "string"):
            return ("lit", value)
        if kind == "op" and value == "(":
            node = self.or_()
            self.take(")")
            return node
        if kind == "name":
            if value in ("true", "false"):
                return ("lit", value == "true")
            if value == "null":
                return ("lit", None)
            if self.peek("("):
                self.take()
                args = []
                if not self.peek(")"):
                    args.append(self.or_())
                    while self.peek(","):
                        self.take()
                        args.append(self.or_())
                self.take(")")
                return ("call", value.lower(), args)
            return ("ctx", value)
        raise ExpressionError(f"unexpected {value!r} in {self.text!r}")


def parse(text):
    return _Parser(text).parse()


def calls_status_function(node):
    """Whether the tree calls always(), success(), failure() or cancelled() anywhere."""
    if not isinstance(node, tuple):
        return False
    if node[0] == "call" and node[1] in STATUS_FUNCTIONS:
        return True
    for part in node[1:]:
        if isinstance(part, tuple) and calls_status_function(part):
            return True
        if isinstance(part, list) and any(calls_status_function(p) for p in part):
            return True
    return False


# --- values ------------------------------------------------------------------------------------


def truthy(v):
    if v is None or v is False:
        return False
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return not (v == 0 or math.isnan(v))
    if isinstance(v, str):
        return v != ""
    return True


def to_number(v):
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip()
        if s == "":
            return 0.0
        try:
            return float(int(s, 16)) if s.lower().startswith("0x") else float(s)
        except ValueError:
            return math.nan
    return math.nan


def to_string(v):
    if v is None:
        return ""
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        if v.is_integer():
            return str(int(v))
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return v
    return json.dumps(v, indent=2)


def _primitive(v):
    return v is None or isinstance(v, (bool, int, float, str))


def loose_equal(a, b):
    if _primitive(a) and _primitive(b):
        if type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                  and not isinstance(a, bool) and not isinstance(b, bool)):
            if isinstance(a, str):
                return a.casefold() == b.casefold()
            if isinstance(a, float) and math.isnan(a):
                return False
            return a == b
        x, y = to_number(a), to_number(b)
        return not (math.isnan(x) or math.isnan(y)) and x == y
    return a is b


def _compare(op, a, b):
    if isinstance(a, str) and isinstance(b, str):
        x, y = a.casefold(), b.casefold()
    else:
        x, y = to_number(a), to_number(b)
        if math.isnan(x) or math.isnan(y):
            return False
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


# --- evaluation --------------------------------------------------------------------------------


class Evaluator:
    """Evaluates trees against `contexts` (name → dict) with `functions` (name → callable
    taking the evaluated arguments): the status functions and hashFiles come from the runner."""

    def __init__(self, contexts, functions=None):
        self.contexts = contexts
        self.functions = dict(_BUILTINS)
        self.functions.update(functions or {})

    def evaluate(self, text):
        return self.eval_node(parse(text))

    def eval_node(self, node):
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "ctx":
            name = node[1]
            if name not in self.contexts:
                raise ExpressionError(f"unknown context '{name}'")
            return self.contexts[name]
        if kind == "prop":
            return _member(self.eval_node(node[1]), node[2])
        if kind == "index":
            return _member(self.eval_node(node[1]), self.eval_node(node[2]))
        if kind == "star":
            base = self.eval_node(node[1])
            if isinstance(base, dict):
                return list(base.values())
            if isinstance(base, list):
                return list(base)
            return []
        if kind == "not":
            return not truthy(self.eval_node(node[1]))
        if kind == "bin":
            op = node[1]
            left = self.eval_node(node[2])
            if op == "&&":
                return self.eval_node(node[3]) if truthy(left) else left
            if op == "||":
                return left if truthy(left) else self.eval_node(node[3])
            right = self.eval_node(node[3])
            if op == "==":
                return loose_equal(left, right)
            if op == "!=":
                return not loose_equal(left, right)
            return _compare(op, left, right)
        if kind == "call":
            name = node[1]
            if name not in self.functions:
                raise ExpressionError(f"unknown function '{name}()'")
            return self.functions[name](*[self.eval_node(a) for a in node[2]])
        raise ExpressionError(f"bad node {node!r}")


def _member(base, key):
    if isinstance(base, list):
        if isinstance(base, list) and isinstance(key, (int, float)) and not isinstance(key, bool):
            i = int(key)
            return base[i] if 0 <= i < len(base) else None
        # property of each element (the object filter's result)
        return [_member(item, key) for item in base]
    if isinstance(base, dict):
        if not isinstance(key, str):
            key = to_string(key)
        if key in base:
            return base[key]
        for k, v in base.items():  # property names are case-insensitive
            if k.casefold() == key.casefold():
                return v
    return None


def _contains(search, item):
    if isinstance(search, list):
        return any(loose_equal(x, item) for x in search)
    return to_string(item).casefold() in to_string(search).casefold()


def _format(fmt, *args):
    out = []
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c == "{" and fmt.startswith("{{", i):
            out.append("{")
            i += 2
        elif c == "}" and fmt.startswith("}}", i):
            out.append("}")
            i += 2
        elif c == "{":
            end = fmt.index("}", i)
            out.append(to_string(args[int(fmt[i + 1:end])]))
            i = end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


_BUILTINS = {
    "contains": _contains,
    "startswith": lambda s, p: to_string(s).casefold().startswith(to_string(p).casefold()),
    "endswith": lambda s, p: to_string(s).casefold().endswith(to_string(p).casefold()),
    "format": lambda fmt, *args: _format(to_string(fmt), *args),
    "join": lambda a, sep=",": to_string(sep).join(to_string(x) for x in a) if isinstance(a, list) else to_string(a),
    "tojson": lambda v: json.dumps(v, indent=2),
    "fromjson": lambda s: json.loads(to_string(s)),
}


# --- strings with ${{ }} -------------------------------------------------------------------------


def _expression_end(text, start):
    """Index of the '}}' closing the expression that starts at `start` (after '${{'), outside
    string literals."""
    i = start
    while i < len(text):
        if text[i] == "'":
            i += 1
            while i < len(text):
                if text[i] == "'":
                    if text.startswith("''", i):
                        i += 2
                        continue
                    break
                i += 1
        elif text.startswith("}}", i):
            return i
        i += 1
    raise ExpressionError(f"unterminated ${{{{ in {text!r}")


def interpolate(text, evaluator):
    """`text` with each `${{ expr }}` replaced by the string form of its value."""
    if not isinstance(text, str):
        return text
    out = []
    pos = 0
    while True:
        start = text.find("${{", pos)
        if start < 0:
            out.append(text[pos:])
            return "".join(out)
        end = _expression_end(text, start + 3)
        out.append(text[pos:start])
        out.append(to_string(evaluator.evaluate(text[start + 3:end])))
        pos = end + 2


def condition_tree(text):
    """The tree of an `if:` value: with or without ${{ }}; without a status function it is
    `success() && (…)` (docs: "a default status check of success() is applied")."""
    if text is True or text is False:
        text = "true" if text else "false"
    text = str(text).strip()
    if text.startswith("${{") and text.endswith("}}") and _expression_end(text, 3) == len(text) - 2:
        text = text[3:-2]
    if text.strip() == "":
        text = "true"
    tree = parse(text)
    if not calls_status_function(tree):
        tree = ("bin", "&&", ("call", "success", []), tree)
    return tree
