"""The processes where submission code runs, and how the grading process follows them.

A check (grader/checking/) decides every verdict; what it hands to a child and reads back is
here, one module per concern:

- `task`: the one frozen object that crosses the boundary (`ReplayTask`), and the runner protocol;
- `folder`: the names in a task's folder and their readers (the only files read back);
- `processes`: killing a child, and every child one grading task started (`TaskProcesses`);
- `spawn`: starting a child (its command, its sandbox, the lifeline that ends it with us);
- `spares`: children started before their task (`Spares`, one object holding its own state);
- `follow`: a child's outcomes as they come, its time limits (`ChildRun`);
- `run`: `run_in_child`, a task in a child of its own;
- `recording`: the recording child, and its one message read from a pipe;
- `replayers`, `compiling`: the children kept for a grading run on a GPU host;
- `capture`, `stuck`: a child's output kept capped; where a late child's code was;
- `roles/`: the child's own side, one module per role, started by `python -m grader.children`.
"""
