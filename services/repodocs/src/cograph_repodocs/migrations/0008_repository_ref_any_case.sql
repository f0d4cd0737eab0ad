-- Git hosts name repositories in any letter case (github.com/Acme/API is github.com/acme/api):
-- one repository per host/owner/name whatever the case, so that a lookup never has two answers.
DO $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM repositories GROUP BY lower(host), lower(owner), lower(name) HAVING count(*) > 1
    ) THEN
        RAISE EXCEPTION 'repositories whose host/owner/name differ only in letter case are registered'
            USING HINT = 'delete all but one of each (SELECT host, owner, name FROM repositories'
                ' ORDER BY lower(host), lower(owner), lower(name)), then start again';
    END IF;
END $$;

CREATE UNIQUE INDEX repositories_ref_any_case ON repositories (lower(host), lower(owner), lower(name));
