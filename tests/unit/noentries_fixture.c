int no_entries_here(void) { return 1; }
