#!/usr/bin/env escript
%%! +S 1:1 -noshell
%% The conformance recorder (docs/conformance.md): runs supervision cases on the real OTP
%% `supervisor` and writes, per case, the normalised event list the simulator's side is compared
%% with.
%%
%%   lic_otp_record.escript [--unit MS] OUTDIR CASE.terms...
%%
%% A CASE.terms file is a scenario file's conformance subset written as Erlang terms by
%% `lic-conformance export` (the one YAML reader stays in C++). One VM runs the cases one after
%% another. Virtual time is real time (OTP's restart window counts whole seconds of
%% erlang:monotonic_time, so time cannot be scaled); a case starts just after a whole monotonic
%% second, as virtual time 0 is, and every recorded instant is rounded to the unit (100 ms by
%% default). Output: OUTDIR/NAME.otp.jsonl, one event a line:
%%   {"t":U,"ev":"start","path":P,"n":N}            a process's init began (start N of path P)
%%   {"t":U,"ev":"exit","path":P,"n":N,"reason":R}  it ended with R
%%   {"t":U,"ev":"report","sup":P,"what":W,"id":I,"reason":R}   a supervisor report
%%   {"t":U,"ev":"call","sup":P,"call":C,"result":V} a management call's result
%%   {"t":U,"ev":"root","path":P,"result":V}        the root's supervisor:start_link result
%%   {"ev":"final","sup":P,"which_children":V,"count_children":V}   at the case's end
%% Terms are printed by fmt/1 below: pids as path#n, atoms bare.
-module(lic_otp_record).
-mode(compile).
-export([main/1, init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2, log/2,
         start_worker/2, start_dynamic/2, start_sup/3]).

-define(REC, lic_otp_recorder).

main(Args) ->
    {Unit, Out, Files} = args(Args, 100),
    ok = filelib:ensure_dir(filename:join(Out, "x")),
    logger:remove_handler(default),
    ok = logger:add_handler(lic_rec, ?MODULE, #{level => all}),
    logger:set_primary_config(level, info),
    lists:foreach(fun(F) -> run_file(F, Unit, Out) end, Files),
    io:format("recorded ~p cases on OTP ~s~n", [length(Files), erlang:system_info(otp_release)]).

args(["--unit", U | Rest], _) -> args(Rest, list_to_integer(U));
args([Out | Files], Unit) when Files =/= [] -> {Unit, Out, Files};
args(_, _) ->
    io:format(standard_error, "usage: lic_otp_record.escript [--unit MS] OUTDIR CASE.terms...~n", []),
    halt(2).

%% ---------------------------------------------------------------- one case

run_file(File, Unit, Out) ->
    {ok, Terms} = file:consult(File),
    {'case', Name, Duration} = lists:keyfind('case', 1, Terms),
    {tree, Tree} = lists:keyfind(tree, 1, Terms),
    Steps = [S || S = {step, _, _, _, _} <- Terms],
    Events = run_case(Tree, Steps, Duration),
    Lines = [line(E, Unit) || E <- Events],
    ok = file:write_file(filename:join(Out, Name ++ ".otp.jsonl"), Lines),
    io:format("~s: ~p events~n", [Name, length(Events)]).

run_case(Tree, Steps, Duration) ->
    catch ets:delete(lic_starts),
    ets:new(lic_starts, [named_table, public]),
    register(?REC, self()),
    process_flag(trap_exit, true),
    T0 = align(),
    put(t0, T0),
    put(pids, #{}),
    put(events, []),
    {sup, Path, Flags, Children} = Tree,
    Self = self(),
    %% The root's parent stays alive while the root lives (a gen_server ends when its parent
    %% does, for any reason); it traps exits so that a root whose start fails cannot take it
    %% down before it reports supervisor:start_link's result (OTP 25's proc_lib sends the ack,
    %% then the failing process exits).
    spawn(fun() ->
              process_flag(trap_exit, true),
              R = start_sup(Path, Flags, Children),
              Self ! {root, Path, R, now_ms()},
              receive {'EXIT', _, _} -> ok end
          end),
    loop(Steps, T0 + Duration),
    final(),
    cleanup(),
    unregister(?REC),
    lists:reverse(get(events)).

%% Virtual time 0 is a whole second: wait for the next whole monotonic second (+1 ms).
align() ->
    Now = erlang:monotonic_time(millisecond),
    T0 = (Now div 1000 + 1) * 1000 + 1,
    receive after T0 - Now -> ok end,
    T0.

now_ms() -> erlang:monotonic_time(millisecond).

add(E) -> put(events, [E | get(events)]).

loop(Steps, End) ->
    Next = case Steps of [{step, At, _, _, _} | _] -> get(t0) + At; [] -> End end,
    Wait = max(0, Next - now_ms()),
    receive
        Msg -> event(Msg), loop(Steps, End)
    after Wait ->
        case Steps of
            [S | Rest] -> step(S), loop(Rest, End);
            [] -> ok
        end
    end.

event({start, Path, Pid, N, T}) ->
    erlang:monitor(process, Pid),
    Pid ! lic_ack,  % the process waits for it: a start that fails at once is still monitored
    put(pids, maps:put(Pid, {Path, N}, get(pids))),
    add({T, start, Path, N});
event({'DOWN', _, process, Pid, Reason}) ->
    T = now_ms(),
    case maps:find(Pid, get(pids)) of
        {ok, {Path, N}} -> add({T, exit, Path, N, fmt(Reason)});
        error -> ok
    end;
event({report, SupPid, What, Report, T}) ->
    Id = case proplists:get_value(offender, Report) of
             undefined -> undefined;
             Off when is_list(Off) -> proplists:get_value(id, Off, proplists:get_value(pid, Off));
             _ -> undefined
         end,
    add({T, report, path_of(SupPid), What, fmt(Id), fmt(proplists:get_value(reason, Report))});
event({result, _Caller, Sup, Call, Result, T}) ->
    add({T, call, Sup, Call, fmt(Result)});
event({root, Path, Result, T}) ->
    add({T, root, Path, fmt(Result)});
event(_) -> ok.

%% ---------------------------------------------------------------- steps

step({step, _At, Op, Target, Opts}) ->
    Pid = pid_of(Target),
    case Op of
        crash when is_pid(Pid) -> Pid ! {lic_crash, maps:get(reason, Opts)};
        kill when is_pid(Pid) -> exit(Pid, kill);
        exit when is_pid(Pid) -> exit(Pid, maps:get(reason, Opts));
        stop when is_pid(Pid) -> spawn(fun() -> catch gen_server:stop(Pid, maps:get(reason, Opts), infinity) end);
        _ when is_pid(Pid) -> manage(Op, Target, Pid, resolve(Target, Opts));
        _ -> ok  % nothing runs there now (the simulator's script_skipped)
    end.

%% A call is made by a process of its own (as the simulator's $script); the recorder waits a
%% little for its result, so that calls of one instant answer in file order.
manage(Op, Target, Sup, Opts) ->
    Rec = self(),
    Caller = spawn(fun() ->
        R = call(Op, Target, Sup, Opts),
        Rec ! {result, self(), Target, Op, R, now_ms()}
    end),
    await(Caller, now_ms() + 20).

await(Caller, Deadline) ->
    receive
        {result, Caller, _, _, _, _} = M -> event(M);
        M -> event(M), await(Caller, Deadline)
    after max(0, Deadline - now_ms()) -> ok
    end.

%% A dynamic child is named by its path: its pid is looked up here, in the recorder.
resolve(Target, #{dynamic := true, id := Id} = Opts) ->
    Opts#{pid => case pid_of(Target ++ "/" ++ atom_to_list(Id)) of
                     P when is_pid(P) -> P;
                     _ -> list_to_pid("<0.0.0>")
                 end};
resolve(_, Opts) -> Opts.

call(start_child, Target, Sup, #{dynamic := N, arg := Arg}) ->
    Path = Target ++ "/" ++ N,
    supervisor:start_child(Sup, [{Path, Arg}]);
call(start_child, _, Sup, #{child := Child}) -> supervisor:start_child(Sup, child_spec(Child));
call(terminate_child, _, Sup, #{dynamic := true, pid := Pid}) ->
    supervisor:terminate_child(Sup, Pid);
call(terminate_child, _, Sup, #{id := Id}) -> supervisor:terminate_child(Sup, Id);
call(restart_child, _, Sup, #{id := Id}) -> supervisor:restart_child(Sup, Id);
call(delete_child, _, Sup, #{id := Id}) -> supervisor:delete_child(Sup, Id);
call(which_children, _, Sup, _) -> rows(supervisor:which_children(Sup));
call(count_children, _, Sup, _) -> supervisor:count_children(Sup).

rows(Rows) when is_list(Rows) -> [{Id, C, T} || {Id, C, T, _Mods} <- Rows];
rows(Other) -> Other.

%% The live pid of a path: its newest start that has not exited.
pid_of(Path) ->
    Live = [{N, P} || {P, {Pa, N}} <- maps:to_list(get(pids)), Pa =:= Path, is_process_alive(P)],
    case lists:reverse(lists:sort(Live)) of
        [{_, P} | _] -> P;
        [] -> undefined
    end.

path_of(Pid) ->
    case maps:find(Pid, get(pids)) of
        {ok, {Path, _}} -> Path;
        error -> "?"
    end.

final() ->
    Sups = lists:usort([Path || {P, {Path, _}} <- maps:to_list(get(pids)), is_process_alive(P),
                                is_supervisor(P)]),
    [add({final, S, fmt(rows(supervisor:which_children(pid_of(S)))),
          fmt(supervisor:count_children(pid_of(S)))}) || S <- Sups],
    ok.

is_supervisor(P) ->
    case erlang:process_info(P, dictionary) of
        {dictionary, D} -> proplists:get_value(lic_sup, D) =:= true;
        _ -> false
    end.

%% Ends every process of the case and waits for them (their events are no longer recorded).
cleanup() ->
    Pids = [P || P <- maps:keys(get(pids)), is_process_alive(P)],
    Refs = [erlang:monitor(process, P) || P <- Pids],
    [exit(P, kill) || P <- Pids],
    [receive {'DOWN', R, _, _, _} -> ok end || R <- Refs],
    flush().

flush() -> receive _ -> flush() after 50 -> ok end.

%% ---------------------------------------------------------------- supervisors

start_sup(Path, Flags, Children) ->
    supervisor:start_link(?MODULE, {sup, Path, Flags, Children}).

child_spec(#{id := Id, start := Start} = C) ->
    Base = maps:with([restart, shutdown, type, significant], C),
    Base#{id => Id, start => mfa(Start)}.

mfa({worker, Path, Cfg}) -> {?MODULE, start_worker, [Path, Cfg]};
mfa({template, Cfg}) -> {?MODULE, start_dynamic, [Cfg]};
mfa({sup, Path, Flags, Children}) -> {?MODULE, start_sup, [Path, Flags, Children]}.

%% ---------------------------------------------------------------- workers (gen_server)

start_worker(Path, Cfg) -> gen_server:start_link(?MODULE, {worker, Path, Cfg}, []).
%% simple_one_for_one: start_child's argument is {Path, Arg}.
start_dynamic(Cfg, {Path, _Arg}) -> start_worker(Path, Cfg).

%% Start N of a path counts the starts under this incarnation of its supervisor (a restarted
%% supervisor's children begin again at 1), as the simulator's labels do.
announce(Path) ->
    Key = {hd(get('$ancestors')), Path},
    N = ets:update_counter(lic_starts, Key, 1, {Key, 0}),
    ?REC ! {start, Path, self(), N, now_ms()},
    receive lic_ack -> ok end,
    N.

%% A supervisor's own init result per start (the file's `init` flag): ok, ignore, or {stop, R},
%% which a supervisor module writes as exit(R) (a bad return value would fail with
%% {bad_return, {Mod, init, Value}}).
init({sup, Path, Flags, Children}) ->
    N = announce(Path),
    Inits = maps:get(inits, Flags, [ok]),
    case lists:nth(min(N, length(Inits)), Inits) of
        ok ->
            put(lic_sup, true),
            {ok, {maps:without([inits], Flags), [child_spec(C) || C <- Children]}};
        ignore -> ignore;
        {stop, R} -> exit(R)
    end;
init({worker, Path, Cfg}) ->
    N = announce(Path),
    Kind = maps:get(kind, Cfg, idle),
    Kind =/= idle andalso Kind =/= crash_after andalso process_flag(trap_exit, true),
    case maps:get(init_delay, Cfg, 0) of 0 -> ok; D -> timer:sleep(D) end,
    Inits = maps:get(inits, Cfg, [ok]),
    case lists:nth(min(N, length(Inits)), Inits) of
        ok ->
            case Kind of
                crash_after -> erlang:send_after(maps:get('after', Cfg), self(),
                                                 {lic_crash, maps:get(reason, Cfg)});
                _ -> ok
            end,
            {ok, Cfg#{crashing => false}};
        ignore -> ignore;
        {stop, R} -> {stop, R}
    end.

handle_call(_, _, S) -> {reply, ok, S}.
handle_cast(_, S) -> {noreply, S}.
handle_info({lic_crash, R}, S) -> {stop, R, S#{crashing => true}};
handle_info(_, S) -> {noreply, S}.

%% A trapping gen_server runs terminate for any exit signal from its parent (and for an orphan's
%% `killed`); the stock trap_exit worker takes its delay there, the stall worker never returns.
terminate(_R, #{crashing := true}) -> ok;
terminate(_R, #{kind := trap_exit} = Cfg) ->
    case maps:get(shutdown_delay, Cfg, 0) of 0 -> ok; D -> timer:sleep(D) end;
terminate(_R, #{kind := stall}) -> receive after infinity -> ok end;
terminate(_, _) -> ok.

%% ---------------------------------------------------------------- the logger handler

log(#{msg := {report, #{label := {supervisor, What}, report := Report}}, meta := Meta}, _)
  when What =/= progress ->
    ?REC ! {report, maps:get(pid, Meta, self()), What, Report, now_ms()};
log(_, _) -> ok.

%% ---------------------------------------------------------------- output

line({final, Sup, Which, Count}, _) ->
    io_lib:format("{\"ev\":\"final\",\"sup\":~s,\"which_children\":~s,\"count_children\":~s}~n",
                  [js(Sup), js(Which), js(Count)]);
line(E, Unit) ->
    T = (element(1, E) - get(t0) + Unit div 2) div Unit,
    [io_lib:format("{\"t\":~p,", [T]), body(E), "}\n"].

body({_, start, Path, N}) -> io_lib:format("\"ev\":\"start\",\"path\":~s,\"n\":~p", [js(Path), N]);
body({_, exit, Path, N, R}) ->
    io_lib:format("\"ev\":\"exit\",\"path\":~s,\"n\":~p,\"reason\":~s", [js(Path), N, js(R)]);
body({_, report, Sup, What, Id, R}) ->
    io_lib:format("\"ev\":\"report\",\"sup\":~s,\"what\":~s,\"id\":~s,\"reason\":~s",
                  [js(Sup), js(atom_to_list(What)), js(Id), js(R)]);
body({_, root, Path, R}) -> io_lib:format("\"ev\":\"root\",\"path\":~s,\"result\":~s", [js(Path), js(R)]);
body({_, call, Sup, Call, R}) ->
    io_lib:format("\"ev\":\"call\",\"sup\":~s,\"call\":~s,\"result\":~s",
                  [js(Sup), js(atom_to_list(Call)), js(R)]).

js(S) -> [$", [esc(C) || C <- lists:flatten(S)], $"].
esc($") -> "\\\"";
esc($\\) -> "\\\\";
esc(C) -> C.

%% A term as text: atoms bare, pids as path#n (the start of that path), strings as "...".
fmt(P) when is_pid(P) ->
    case maps:find(P, get(pids)) of
        {ok, {Path, N}} -> Path ++ "#" ++ integer_to_list(N);
        error -> "pid"
    end;
fmt(A) when is_atom(A) -> atom_to_list(A);
fmt(I) when is_integer(I) -> integer_to_list(I);
%% supervisor's #child{} record (in a failed start_child's result) as {child,Id}.
fmt({child, _Pid, Id, _Mfa, _R, _Sig, _Sd, _T, _M}) -> "{child," ++ fmt(Id) ++ "}";
fmt(T) when is_tuple(T) -> "{" ++ join([fmt(X) || X <- tuple_to_list(T)]) ++ "}";
fmt(L) when is_list(L) ->
    case io_lib:printable_list(L) andalso L =/= [] of
        true -> "\"" ++ L ++ "\"";
        false -> "[" ++ join([fmt(X) || X <- L]) ++ "]"
    end;
fmt(M) when is_map(M) -> fmt(lists:sort(maps:to_list(M)));
fmt(F) when is_function(F) -> "fun";
fmt(Other) -> lists:flatten(io_lib:format("~0p", [Other])).

join([]) -> "";
join([X]) -> X;
join([X | Xs]) -> X ++ "," ++ join(Xs).
