use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

#[test]
fn the_key_file_is_read_when_the_environment_has_no_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("key");
    std::fs::write(&file, "sk-file\n").unwrap();
    let path = file.display().to_string();
    let resolved = |pairs: &[(&str, &str)]| {
        resolve(&ConfigOverrides::default(), env_of(pairs), None).map(|c| c.api_key)
    };
    assert_eq!(
        [
            resolved(&[(MODEL_VAR, "m"), (API_KEY_FILE_VAR, &path)]),
            resolved(&[
                (MODEL_VAR, "m"),
                (API_KEY_FILE_VAR, &path),
                (API_KEY_VAR, "sk-env")
            ]),
            resolved(&[(MODEL_VAR, "m"), (API_KEY_FILE_VAR, "/nonexistent/key")]),
        ],
        [
            Ok(ApiKey::new("sk-file")),
            Ok(ApiKey::new("sk-env")),
            Err(ConfigError::KeyFile {
                path: "/nonexistent/key".into(),
                reason: "No such file or directory (os error 2)".into()
            }),
        ]
    );
}

#[test]
fn flags_win_over_env_which_wins_over_dotenv() {
    let dir = tempfile::tempdir().unwrap();
    let dotenv = dir.path().join(".env");
    std::fs::write(
        &dotenv,
        "# local\nexport OPENAI_MODEL='file-model'\nOPENAI_API_KEY=\"file-key\"\nOPENAI_BASE_URL=http://file/v1/\n",
    )
    .unwrap();
    let env = env_of(&[(MODEL_VAR, "env-model")]);
    let overrides = ConfigOverrides {
        base_url: Some("http://flag/v1".into()),
        ..ConfigOverrides::default()
    };
    let config = resolve(&overrides, &env, Some(&dotenv)).unwrap();
    assert_eq!(
        config,
        OpenAiConfig {
            base_url: "http://flag/v1".into(),
            api_key: ApiKey::new("file-key"),
            model: "env-model".into(),
            fallback_model: None,
            sampling: Sampling::default(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    );
    let from_file = resolve(&ConfigOverrides::default(), env_of(&[]), Some(&dotenv)).unwrap();
    assert_eq!(from_file.base_url, "http://file/v1");
}

#[test]
fn missing_names_every_variable_and_points_to_the_local_model() {
    let err = resolve(
        &ConfigOverrides::default(),
        env_of(&[(API_KEY_VAR, "  ")]),
        None,
    )
    .unwrap_err();
    assert_eq!(
        err,
        ConfigError::Missing {
            missing: vec![API_KEY_VAR, MODEL_VAR]
        }
    );
    let text = err.to_string();
    assert!(
        text.starts_with("missing model configuration: OPENAI_API_KEY, OPENAI_MODEL.\nSet them")
    );
    let repo = repository();
    assert_eq!(
        text.lines().last(),
        Some(
            format!(
                "No API key? `just -f {repo}/justfile local-model` serves a small model on \
                 127.0.0.1 and prints the settings to use (`just chNN ...` in that folder does \
                 it for you), or replay a session offline with \
                 `--script {repo}/examples/scripts/chNN.json`."
            )
            .as_str()
        )
    );
    // The named files exist: the suggestion works from any folder.
    assert!(std::path::Path::new(&repo).join("justfile").is_file());
    assert!(
        std::path::Path::new(&repo)
            .join("examples/scripts/ch10.json")
            .is_file()
    );
}

#[test]
fn a_required_fallback_model_is_listed_with_the_other_missing_settings() {
    let required = ConfigOverrides {
        fallback: FallbackNeed::Required,
        ..ConfigOverrides::default()
    };
    let err = resolve(&required, env_of(&[(API_KEY_VAR, "k")]), None).unwrap_err();
    assert_eq!(
        err,
        ConfigError::Missing {
            missing: vec![MODEL_VAR, FALLBACK_MODEL_VAR]
        }
    );
    let env = env_of(&[
        (API_KEY_VAR, "k"),
        (MODEL_VAR, "m"),
        (FALLBACK_MODEL_VAR, "small"),
    ]);
    let found = [
        resolve(&required, &env, None).unwrap().fallback_model,
        resolve(&ConfigOverrides::default(), &env, None)
            .unwrap()
            .fallback_model,
    ];
    assert_eq!(found, [Some("small".to_string()), None]);
}

#[test]
fn the_key_never_prints() {
    let key = ApiKey::new("sk-very-secret");
    assert_eq!(format!("{key:?}"), "ApiKey([redacted])");
    assert_eq!(key.redact("Bearer sk-very-secret!"), "Bearer [redacted]!");
}

#[test]
fn a_huge_dotenv_is_refused_not_read_whole() {
    let (_dir, path) = dotenv_with(&"#".repeat(100_000));
    assert_eq!(
        read_dotenv(&path),
        Err(format!("larger than {DOTENV_LIMIT} bytes"))
    );
}

fn dotenv_with(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".env");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn a_dotenv_base_url_with_the_users_key_is_refused() {
    let (_dir, dotenv) = dotenv_with("OPENAI_BASE_URL=http://evil.example/v1\nOPENAI_MODEL=m\n");
    let env = env_of(&[(API_KEY_VAR, "sk-user")]);
    let err = resolve(&ConfigOverrides::default(), &env, Some(&dotenv)).unwrap_err();
    let path = dotenv.display().to_string();
    assert_eq!(err, ConfigError::DotEnvRedirect { path: path.clone() });
    assert_eq!(
        err.to_string(),
        format!(
            "{path} sets OPENAI_BASE_URL, but OPENAI_API_KEY comes from your environment: a \
             `.env` file may only point its own key at a server, so your key is not sent to \
             an address a file in the working directory chose.\nTo fix it: pass --base-url \
             (or export OPENAI_BASE_URL) if you trust that server, or remove OPENAI_BASE_URL \
             from {path}, or keep the key for that server in {path} and unset \
             OPENAI_API_KEY in your environment."
        )
    );
}

#[test]
fn a_dotenv_key_does_not_license_its_url_for_the_users_key() {
    // The file has its own key, but the environment's wins: the pair would be mixed.
    let (_dir, dotenv) =
        dotenv_with("OPENAI_BASE_URL=http://evil.example/v1\nOPENAI_API_KEY=sk-file\n");
    let env = env_of(&[(API_KEY_VAR, "sk-user"), (MODEL_VAR, "m")]);
    let err = resolve(&ConfigOverrides::default(), &env, Some(&dotenv)).unwrap_err();
    assert_eq!(
        err,
        ConfigError::DotEnvRedirect {
            path: dotenv.display().to_string()
        }
    );
}

#[test]
fn a_dotenv_cannot_pick_the_model_billed_to_the_users_key() {
    let (_dir, dotenv) = dotenv_with("OPENAI_MODEL=o1-pro-expensive\n");
    let path = dotenv.display().to_string();
    let env = env_of(&[(API_KEY_VAR, "sk-user")]);
    assert_eq!(
        resolve(&ConfigOverrides::default(), &env, Some(&dotenv)).unwrap_err(),
        ConfigError::DotEnvModel {
            path: path.clone(),
            var: MODEL_VAR
        }
    );
    let (_dir2, fallback) = dotenv_with("OPENAI_FALLBACK_MODEL=o1-pro-expensive\n");
    let env = env_of(&[(API_KEY_VAR, "sk-user"), (MODEL_VAR, "m")]);
    let needs_fallback = ConfigOverrides {
        fallback: FallbackNeed::Required,
        ..ConfigOverrides::default()
    };
    assert_eq!(
        resolve(&needs_fallback, &env, Some(&fallback)).unwrap_err(),
        ConfigError::DotEnvModel {
            path: fallback.display().to_string(),
            var: FALLBACK_MODEL_VAR
        }
    );
    // The user's own choice wins, and then the file's model is never read.
    let by_flag = ConfigOverrides {
        model: Some("m".into()),
        ..ConfigOverrides::default()
    };
    let env = env_of(&[(API_KEY_VAR, "sk-user")]);
    assert_eq!(resolve(&by_flag, &env, Some(&dotenv)).unwrap().model, "m");
    // A `.env` that brings its own key may choose that key's model.
    let (_dir3, own) = dotenv_with("OPENAI_API_KEY=sk-file\nOPENAI_MODEL=file-model\n");
    assert_eq!(
        resolve(&ConfigOverrides::default(), env_of(&[]), Some(&own))
            .unwrap()
            .model,
        "file-model"
    );
}

#[test]
fn the_users_own_base_url_overrides_the_dotenv_one() {
    let (_dir, dotenv) = dotenv_with("OPENAI_BASE_URL=http://evil.example/v1\n");
    let env = env_of(&[(API_KEY_VAR, "sk-user"), (MODEL_VAR, "m")]);
    let by_flag = ConfigOverrides {
        base_url: Some("http://flag/v1".into()),
        ..ConfigOverrides::default()
    };
    let urls = [
        resolve(&by_flag, &env, Some(&dotenv)).unwrap().base_url,
        resolve(
            &ConfigOverrides::default(),
            env_of(&[
                (API_KEY_VAR, "sk-user"),
                (MODEL_VAR, "m"),
                (BASE_URL_VAR, "http://env/v1"),
            ]),
            Some(&dotenv),
        )
        .unwrap()
        .base_url,
    ];
    assert_eq!(urls, ["http://flag/v1", "http://env/v1"]);
}

#[test]
fn a_bad_dotenv_line_is_named() {
    let err = parse_dotenv("A=1\nnonsense\n", ".env").unwrap_err();
    assert_eq!(err.to_string(), ".env:2: expected KEY=VALUE");
}
