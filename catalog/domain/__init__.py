"""The framework-free core both engines build on (issue 20, 9.): types and texts with no Django,
no database and nothing of planner or costs, so the sizing engine (planner.engine) and the cost
engine (costs.engine) can share them without importing each other. `.importlinter` keeps it so.

- `messages`: `Msg`, the translatable engine text, and its JSON form.
"""
