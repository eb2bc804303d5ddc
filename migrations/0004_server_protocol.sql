-- The protocol revision of each server's last good connection, so a
-- restart goes straight to the handshake that worked (a legacy server is
-- not probed with server/discover again).

ALTER TABLE server_tools ADD COLUMN protocol TEXT;
