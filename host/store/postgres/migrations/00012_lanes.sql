-- Lanes (spec/lane-v1beta1.md §2.5 rules 4–5, repo decision 0053): an
-- operation answers only on the lane whose mutation created it, an upload
-- only on the lane that started it, and the idempotency namespace becomes
-- (lane, tenant, principal, space, key). Every row written before this
-- migration belongs to lane forms.takoform.com/v1alpha3, the one lane
-- hosts served then, and so does a row a writer leaves without a lane
-- (the default stays, so a replica still running the older binary during
-- a rolling upgrade keeps writing lane v1alpha3 rows).

-- +goose Up
ALTER TABLE operations ADD COLUMN lane TEXT COLLATE "C" NOT NULL DEFAULT 'forms.takoform.com/v1alpha3';
ALTER TABLE uploads ADD COLUMN lane TEXT COLLATE "C" NOT NULL DEFAULT 'forms.takoform.com/v1alpha3';
ALTER TABLE idempotency ADD COLUMN lane TEXT COLLATE "C" NOT NULL DEFAULT 'forms.takoform.com/v1alpha3';
ALTER TABLE idempotency DROP CONSTRAINT idempotency_pkey;
ALTER TABLE idempotency ADD PRIMARY KEY (lane, tenant, principal, space, key);

-- +goose Down
-- Records of lanes other than v1alpha3 have no place in the older key:
-- they are dropped (a replay record is a cache of answers, never a
-- resource).
DELETE FROM idempotency WHERE lane <> 'forms.takoform.com/v1alpha3';
ALTER TABLE idempotency DROP CONSTRAINT idempotency_pkey;
ALTER TABLE idempotency ADD PRIMARY KEY (tenant, principal, space, key);
ALTER TABLE idempotency DROP COLUMN lane;
ALTER TABLE uploads DROP COLUMN lane;
ALTER TABLE operations DROP COLUMN lane;
