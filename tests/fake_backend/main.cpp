// STUB: replaced by the fake llama-server.
int main() { return 0; }
