module gatehouse.local/cluster/pause

go 1.24
