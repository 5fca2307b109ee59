"""Which names a file binds itself, per scope, for the policy (grader/containment/policy.py).

A parameter called `input` or a local called `max` is the learner's variable, not the
builtin; the policy flags a forbidden builtin only where the name is not bound in the scope
that reads it or one around it (module, enclosing functions), as Python resolves it.
"""

from __future__ import annotations

import ast

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _arguments(args: ast.arguments) -> set:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.arg for a in every if a is not None}


def _bound_in(body_nodes) -> set:
    """Names bound directly in a scope (nested functions bind their names here, and keep
    their own bodies to themselves)."""
    found, todo = set(), list(body_nodes)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            todo.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.arg):  # comprehension-free: arguments of lambdas are skipped above
            pass
        todo.extend(ast.iter_child_nodes(node))
    return found


def scope_names(node) -> set:
    """Names a module, function or lambda binds itself."""
    if isinstance(node, ast.Lambda):
        return _arguments(node.args)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _arguments(node.args) | _bound_in(node.body)
    return _bound_in(node.body)


class ScopeTracker:
    """Mixed into the policy's checker: `shadows(name)` while visiting."""

    def enter_scope(self, node) -> None:
        self.scopes = getattr(self, "scopes", [])
        self.scopes.append(scope_names(node))

    def leave_scope(self) -> None:
        self.scopes.pop()

    def shadows(self, name: str) -> bool:
        return any(name in names for names in getattr(self, "scopes", ()))
