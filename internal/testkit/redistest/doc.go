// Package redistest starts real redis-server processes for tests on free
// loopback ports: single nodes; a master with replicas (StartReplicated)
// and a group of Sentinels watching it (StartSentinels); Redis Clusters,
// with or without a replica per master (StartCluster, StartClusterWith),
// with short timeouts so a killed master's replica takes over in a few
// seconds. Any node can be killed (SIGKILL, as a crash) and restarted,
// and WaitFailover waits until Redis has finished a failover. A restart
// that finds the AOF torn by the kill repairs it with redis-check-aof
// --fix, as an operator would, and TearLastBlock tears one on purpose.
// It never uses a Redis someone else started. A missing redis-server
// fails the test rather than skipping it.
//
// It is for tests only.
package redistest
