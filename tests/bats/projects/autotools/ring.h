/* Passes a token once round the ring of all ranks; returns the value rank 0 gets back. */
int ring_pass(int token);
